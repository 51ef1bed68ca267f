// The catalog of events the platform sends: for each type its envelope ("listing"), who may
// receive it, whether the tenant webhook gets it by default, and an example `data`. The emitter
// builds envelopes from it, PUT /v1/webhooks validates `events` against it, GET
// /v1/webhooks/event-types and the OpenAPI `webhooks` section are generated from it.

/**
 * Envelope shapes, as the spec lists them:
 * - `A`      `{type, call_id, agent_id, timestamp, data, event_id}` (live call events)
 * - `B`      `{event, id, ts, data}` (outcome events)
 * - `tenant` `{event, timestamp, data, id}` (tenant events; also webhook.test)
 */
export const LISTINGS = ['A', 'B', 'tenant'] as const;
export type Listing = (typeof LISTINGS)[number];

export interface EventTypeInfo {
  listing: Listing;
  description: string;
  /** An agent's webhook_url may receive it (call events and webhook.test). */
  agent: boolean;
  /** The tenant webhook receives it when PUT /v1/webhooks is sent without `events`. */
  tenantDefault: boolean;
  example: Record<string, unknown>;
}

const CALL = 'call_01jdq3x4k5m6n7p8q9r0s1t2v3';
const AGENT = 'agent_01jdq3x4k5m6n7p8q9r0s1t2v3';
const BASE = 'https://api.example.com/v1/calls/call_01jdq3x4k5m6n7p8q9r0s1t2v3';

export const EVENT_TYPES = {
  'call.started': {
    listing: 'A',
    description: 'The call was answered and the audio session opened.',
    agent: true,
    tenantDefault: false,
    example: { direction: 'outbound', from: '+15550100001', to: '+15550100200' },
  },
  'call.transcript': {
    listing: 'A',
    description: 'One completed utterance of the agent or the caller.',
    agent: true,
    tenantDefault: false,
    example: { role: 'user', text: 'Hi, I would like to book a table.', start_ms: 2140, end_ms: 4380, turn: 2 },
  },
  'call.transfer': {
    listing: 'A',
    description: 'The agent is transferring the call to a human.',
    agent: true,
    tenantDefault: false,
    example: { to: '+15550100999', reason: 'caller asked for a human' },
  },
  'call.error': {
    listing: 'A',
    description: 'Something failed mid-call.',
    agent: true,
    tenantDefault: false,
    example: { code: 'media_error', message: 'the media stream closed unexpectedly' },
  },
  'call.ended': {
    listing: 'A',
    description: 'The call reached a terminal state, for any reason; sent once its recording and analysis have settled (recording_url and the outcome event\'s extracted are final).',
    agent: true,
    tenantDefault: false,
    example: {
      duration_ms: 83120,
      status: 'completed',
      end_reason: 'caller_goodbye',
      transcript_url: `${BASE}/transcript?expires=1764496800&signature=3f1c…`,
      recording_url: `${BASE}/recording.mp3?expires=1764496800&signature=9ab2…`,
    },
  },
  'call.completed': {
    listing: 'B',
    description: 'The call connected and ended normally: full transcript and extracted fields.',
    agent: true,
    tenantDefault: false,
    example: {
      call_id: CALL,
      agent_id: AGENT,
      from: '+15550100001',
      to: '+15550100200',
      duration_seconds: 84,
      transcript: 'agent: Hello, this is Ada from Bistro.\nuser: Hi, I would like to book a table.',
      extracted: { party_size: 4, email: 'ada@example.com' },
    },
  },
  'call.transferred': {
    listing: 'B',
    description: 'The agent transferred the call to a human.',
    agent: true,
    tenantDefault: false,
    example: { call_id: CALL, agent_id: AGENT, from: '+15550100001', to: '+15550100200', transferred_to: '+15550100999', reason: 'caller asked for a human' },
  },
  'call.failed': {
    listing: 'B',
    description: 'The call could not connect (busy, no answer, failed to connect) or failed.',
    agent: true,
    tenantDefault: false,
    example: { call_id: CALL, agent_id: AGENT, from: '+15550100001', to: '+15550100101', status: 'failed', end_reason: 'busy' },
  },
  'campaign.completed': {
    listing: 'B',
    description: 'A campaign called its last contact.',
    agent: false,
    tenantDefault: true,
    example: {
      campaign_id: 'cmp_01jdq3x4k5m6n7p8q9r0s1t2v3',
      name: 'November reminders',
      total: 120,
      completed: 111,
      failed: 9,
      started_at: '2026-11-23T09:00:00.000Z',
      completed_at: '2026-11-23T10:42:10.512Z',
    },
  },
  'payment.succeeded': {
    listing: 'B',
    description: 'A wallet top-up landed.',
    agent: false,
    tenantDefault: true,
    example: { payment_id: 'pay_01jdq3x4k5m6n7p8q9r0s1t2v3', amount_usd: 50, currency: 'USD', balance_usd: 57.25 },
  },
  'voice_session.ended': {
    listing: 'tenant',
    description: 'A headless AI voice session finished.',
    agent: false,
    tenantDefault: true,
    example: {
      room_name: 'vs_01jdq3x4k5m6n7p8q9r0s1t2v3',
      agent_id: AGENT,
      external_user_id: 'user-42',
      duration_sec: 95,
      cost_usd: 0.1425,
      ended_at: '2026-11-23T10:01:35.000Z',
    },
  },
  'wallet.low_balance': {
    listing: 'tenant',
    description: 'The balance dropped below the threshold (at most once per 24 h).',
    agent: false,
    tenantDefault: true,
    example: { balance_usd: 4.75, threshold_usd: 5 },
  },
  'webhook.test': {
    listing: 'tenant',
    description: 'Sent by POST /v1/webhooks/test and POST /v1/agents/{id}/webhook/test.',
    agent: true,
    tenantDefault: false,
    example: { message: 'This is a test event from Voice Agent Platform.' },
  },
} as const satisfies Record<string, EventTypeInfo>;

export type EventType = keyof typeof EVENT_TYPES;
export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as EventType[];
/** What a tenant webhook may subscribe to: every event but webhook.test (always delivered to its target). */
export const SUBSCRIBABLE_EVENT_TYPES = EVENT_TYPE_NAMES.filter((t) => t !== 'webhook.test');
export const TENANT_DEFAULT_EVENTS = EVENT_TYPE_NAMES.filter((t) => EVENT_TYPES[t].tenantDefault);

export function eventTypeInfo(type: string): EventTypeInfo | undefined {
  return Object.hasOwn(EVENT_TYPES, type) ? (EVENT_TYPES as Record<string, EventTypeInfo>)[type] : undefined;
}

export interface EnvelopeInput {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  callId?: string | null;
  agentId?: string | null;
}

/** The body a receiver gets, in its listing's field order. */
export function buildEnvelope(listing: Listing, e: EnvelopeInput): Record<string, unknown> {
  switch (listing) {
    case 'A':
      return { type: e.type, call_id: e.callId ?? null, agent_id: e.agentId ?? null, timestamp: e.timestamp, data: e.data, event_id: e.id };
    case 'B':
      return { event: e.type, id: e.id, ts: e.timestamp, data: e.data };
    case 'tenant':
      return { event: e.type, timestamp: e.timestamp, data: e.data, id: e.id };
  }
}

/** A complete example envelope of the type (docs, event-types catalog). */
export function exampleEnvelope(type: EventType): Record<string, unknown> {
  const info = EVENT_TYPES[type];
  return buildEnvelope(info.listing, {
    id: 'evt_01jdq3x4k5m6n7p8q9r0s1t2v3',
    type,
    timestamp: '2026-11-23T10:00:00.000Z',
    data: info.example,
    callId: info.listing === 'A' ? CALL : null,
    agentId: info.listing === 'A' ? AGENT : null,
  });
}
