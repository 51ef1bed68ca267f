import { type TSchema, Type } from 'typebox';
import type { OpenApiExtras } from '../../platform/http/openapi.ts';
import { EVENT_TYPE_NAMES, EVENT_TYPES, type EventType, exampleEnvelope, type Listing } from '../../platform/outbox/catalog.ts';

// The OpenAPI 3.1 top-level `webhooks` section: one entry per event the platform sends, with its
// envelope (listing A, B or tenant), its `data` schema, the signature headers and an example.
// Data schemas allow extra fields: new fields may be added to an event without a new version.

const Str = (description?: string) => Type.String(description ? { description } : {});
const Int = (description?: string) => Type.Integer(description ? { description } : {});
const Usd = (description?: string) => Type.Number(description ? { description } : {});
const Time = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
const open = <T extends Record<string, TSchema>>(properties: T, required: (keyof T & string)[]) => ({
  ...Type.Object(properties, { additionalProperties: true }),
  required,
});

const DATA: Record<EventType, object> = {
  'call.started': open({ direction: Type.Enum(['inbound', 'outbound', 'web']), from: Str('E.164 or client id'), to: Str() }, ['direction']),
  'call.transcript': open(
    { role: Type.Enum(['agent', 'user']), text: Str(), start_ms: Int('From the call start'), end_ms: Int(), turn: Int('0-based turn number') },
    ['role', 'text', 'start_ms', 'end_ms', 'turn'],
  ),
  'call.transfer': open({ to: Str('E.164 number the call is transferred to'), reason: Str() }, ['to']),
  'call.error': open({ code: Str(), message: Str() }, ['code', 'message']),
  'call.ended': open(
    {
      duration_ms: Int(),
      status: Str('Terminal call status (completed, failed, busy, no_answer, canceled …)'),
      end_reason: Type.Union([Str(), Type.Null()]),
      transcript_url: Type.Union([Str('Signed link, valid 7 days'), Type.Null()]),
      recording_url: Type.Union([Str('Signed link, valid 7 days'), Type.Null()]),
    },
    ['duration_ms', 'status'],
  ),
  'call.completed': open(
    {
      call_id: Str(),
      agent_id: Str(),
      from: Str(),
      to: Str(),
      duration_seconds: Int(),
      transcript: Str('The whole transcript, one "role: text" line per utterance'),
      extracted: Type.Object({}, { additionalProperties: true, description: 'The agent extraction_fields' }),
    },
    ['call_id', 'agent_id', 'from', 'to', 'duration_seconds', 'transcript', 'extracted'],
  ),
  'call.transferred': open({ call_id: Str(), agent_id: Str(), from: Str(), to: Str(), transferred_to: Str(), reason: Str() }, ['call_id', 'agent_id']),
  'call.failed': open({ call_id: Str(), agent_id: Str(), from: Str(), to: Str(), status: Str(), end_reason: Str('busy, no_answer, failed_to_connect …'), error: Str() }, ['call_id', 'agent_id']),
  'campaign.completed': open(
    { campaign_id: Str(), name: Str(), total: Int(), completed: Int(), failed: Int(), started_at: Time(), completed_at: Time() },
    ['campaign_id', 'name', 'total', 'completed', 'failed', 'completed_at'],
  ),
  'payment.succeeded': open({ payment_id: Str(), amount_usd: Usd(), currency: Str(), balance_usd: Usd() }, ['payment_id', 'amount_usd']),
  'voice_session.ended': open(
    { room_name: Str(), agent_id: Str(), external_user_id: Str(), duration_sec: Int(), cost_usd: Usd(), ended_at: Time() },
    ['room_name', 'agent_id', 'external_user_id', 'duration_sec', 'cost_usd', 'ended_at'],
  ),
  'wallet.low_balance': open({ balance_usd: Usd(), threshold_usd: Usd() }, ['balance_usd', 'threshold_usd']),
  'webhook.test': open({ message: Str() }, ['message']),
};

function pascal(type: string): string {
  return type
    .split(/[._]/)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}

function envelope(listing: Listing, type: EventType, dataRef: object): object {
  const name = Type.Literal(type);
  const timestamp = Time('When the event happened (ISO 8601 UTC, milliseconds)');
  const id = Str('evt_ id, stable per event (also the webhook-id header): deduplicate on it');
  switch (listing) {
    case 'A':
      return Type.Object({ type: name, call_id: Str(), agent_id: Str(), timestamp, data: dataRef as TSchema, event_id: id });
    case 'B':
      return Type.Object({ event: name, id, ts: timestamp, data: dataRef as TSchema });
    case 'tenant':
      return Type.Object({ event: name, timestamp, data: dataRef as TSchema, id });
  }
}

const header = (name: string, description: string, example: string) => ({ name, in: 'header', required: true, description, schema: { type: 'string' }, example });

const HEADERS = [
  header('X-Service-Signature', 'sha256=<hex HMAC-SHA256 of the raw body, keyed with the whole whsec_… secret>', 'sha256=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd'),
  header('webhook-id', 'Standard Webhooks: the event id (stable across retries and replays)', 'evt_01jdq3x4k5m6n7p8q9r0s1t2v3'),
  header('webhook-timestamp', 'Standard Webhooks: seconds since the epoch when this attempt was signed', '1795428000'),
  header(
    'webhook-signature',
    'Standard Webhooks: space-separated v1,<base64 HMAC-SHA256 of "id.timestamp.body"> keyed with the base64-decoded bytes after whsec_; two entries for 24 h after a secret rotation',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ),
];

export function webhooksOpenApi(): Required<OpenApiExtras> {
  const schemas: Record<string, unknown> = {};
  const webhooks: Record<string, unknown> = {};
  for (const type of EVENT_TYPE_NAMES) {
    const info = EVENT_TYPES[type];
    const base = pascal(type);
    schemas[`${base}Data`] = DATA[type];
    schemas[`${base}Event`] = envelope(info.listing, type, { $ref: `#/components/schemas/${base}Data` });
    const receivers = info.agent ? (type === 'webhook.test' ? "the agent's webhook_url or the tenant webhook" : "the agent's webhook_url (and the tenant webhook when subscribed)") : 'the tenant webhook';
    webhooks[type] = {
      post: {
        operationId: `${base[0].toLowerCase()}${base.slice(1)}Event`,
        summary: info.description,
        description: `Sent to ${receivers}. Envelope: listing ${info.listing}. Delivered at least once: deduplicate on the event id.`,
        tags: ['webhook events'],
        parameters: HEADERS,
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${base}Event` }, example: exampleEnvelope(type) } } },
        responses: {
          '2XX': { description: 'Delivered' },
          '4XX': { description: 'Not retried: the delivery is failed (except 408 and 429, which are retried)' },
          '5XX': { description: 'Retried on the schedule (as are timeouts and connection errors)' },
        },
      },
    };
  }
  return { webhooks, schemas };
}
