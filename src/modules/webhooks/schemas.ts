import { type Static, Type } from 'typebox';
import { ListQuery, Nullable, NullableTimestamp, Timestamp } from '../../platform/http/schemas.ts';
import { EVENT_TYPE_NAMES, LISTINGS, SUBSCRIBABLE_EVENT_TYPES } from '../../platform/outbox/catalog.ts';
import { DELIVERY_STATUSES, DESTINATIONS } from './tables.ts';

const SubscribableEvent = Type.Enum(SUBSCRIBABLE_EVENT_TYPES,
  { description: 'An event type of GET /v1/webhooks/event-types (webhook.test is always delivered)' },
);
const EventTypeName = Type.Enum(EVENT_TYPE_NAMES);
const WebhookUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL receiving the events', examples: ['https://example.com/hooks/voice'] });
const Secret = Type.String({ description: 'whsec_ + base64 of 24 random bytes; signs every delivery', examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] });

export const PutWebhookBody = Type.Object(
  {
    webhook_url: WebhookUrl,
    events: Type.Optional(
      Type.Array(SubscribableEvent, {
        minItems: 1,
        maxItems: 50,
        uniqueItems: true,
        description: 'Default: voice_session.ended, wallet.low_balance, campaign.completed, payment.succeeded',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PutWebhookBody = Static<typeof PutWebhookBody>;

export const TenantWebhook = Type.Object(
  { webhook_url: WebhookUrl, events: Type.Array(Type.String()), created_at: Timestamp, updated_at: Timestamp },
  { title: 'TenantWebhook' },
);
export type TenantWebhook = Static<typeof TenantWebhook>;

export const TenantWebhookWithSecret = Type.Object(
  {
    webhook_url: WebhookUrl,
    webhook_secret: Secret,
    events: Type.Array(Type.String()),
    previous_secret_expires_at: Type.Optional(
      Type.Union([Timestamp, Type.Null()], { description: 'Until then the previous secret also signs (webhook-signature carries both)' }),
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'TenantWebhookWithSecret' },
);
export type TenantWebhookWithSecret = Static<typeof TenantWebhookWithSecret>;

export const TestResult = Type.Object(
  { event_id: Type.String({ examples: ['evt_01jdq3x4k5m6n7p8q9r0s1t2v3'] }), delivery_ids: Type.Array(Type.String()) },
  { title: 'WebhookTestResult' },
);

export const EventTypeItem = Type.Object(
  {
    type: EventTypeName,
    listing: Type.Enum(LISTINGS, { description: 'Envelope: A {type, call_id, agent_id, timestamp, data, event_id}; B {event, id, ts, data}; tenant {event, timestamp, data, id}' }),
    description: Type.String(),
    destinations: Type.Array(Type.Enum(DESTINATIONS)),
    tenant_default: Type.Boolean(),
    example: Type.Object({}, { additionalProperties: true, description: 'A complete example body' }),
  },
  { title: 'WebhookEventType' },
);
export const EventTypeList = Type.Object(
  { data: Type.Array(EventTypeItem), has_more: Type.Boolean(), next_cursor: Type.Union([Type.String(), Type.Null()]) },
  { title: 'WebhookEventTypeList' },
);

const deliveryFields = {
  id: Type.String({ examples: ['dlv_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
  event_id: Type.String({ description: 'Also the webhook-id header; stable across retries and replays' }),
  event_type: Type.String({ examples: ['call.ended'] }),
  destination: Type.Enum(DESTINATIONS),
  agent_id: Nullable(Type.String()),
  url: Type.String(),
  status: Type.Enum(DELIVERY_STATUSES, { description: 'pending (an attempt is due), succeeded, failed (a 4xx not retried), dead (attempts exhausted)' }),
  attempt_count: Type.Integer(),
  max_attempts: Type.Integer(),
  next_attempt_at: NullableTimestamp,
  last_attempt_at: NullableTimestamp,
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
};
export const Delivery = Type.Object(deliveryFields, { title: 'WebhookDelivery' });
export type Delivery = Static<typeof Delivery>;

export const Attempt = Type.Object(
  {
    id: Type.String(),
    attempt: Type.Integer({ description: '1 for the first attempt' }),
    trigger: Type.Union([Type.Literal('scheduled'), Type.Literal('manual')]),
    started_at: Timestamp,
    duration_ms: Type.Integer(),
    status_code: Nullable(Type.Integer()),
    response_excerpt: Nullable(Type.String({ description: 'At most 2 KB of the response body' })),
    error: Nullable(Type.String()),
  },
  { title: 'WebhookAttempt' },
);
export type Attempt = Static<typeof Attempt>;

export const DeliveryDetail = Type.Object(
  {
    ...deliveryFields,
    payload: Type.Object({}, { additionalProperties: true, description: 'The body sent (the event envelope)' }),
    attempts: Type.Array(Attempt),
  },
  { title: 'WebhookDeliveryDetail' },
);
export type DeliveryDetail = Static<typeof DeliveryDetail>;

export const DeliveryList = Type.Object(
  { data: Type.Array(Delivery), has_more: Type.Boolean(), next_cursor: Type.Union([Type.String(), Type.Null()]) },
  { title: 'WebhookDeliveryList' },
);

export const DeliveriesQuery = Type.Object({
  ...ListQuery.properties,
  status: Type.Optional(Type.Enum(DELIVERY_STATUSES)),
  event_type: Type.Optional(EventTypeName),
  destination: Type.Optional(Type.Enum(DESTINATIONS)),
});
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;

export const FailedQuery = Type.Object({ ...ListQuery.properties, event_type: Type.Optional(EventTypeName) });
export type FailedQuery = Static<typeof FailedQuery>;

export const ReplayBody = Type.Object(
  {
    event_type: Type.Optional(EventTypeName),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Deliveries created at or after' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Deliveries created at or before' })),
  },
  { additionalProperties: false },
);
export type ReplayBody = Static<typeof ReplayBody>;

export const ReplayResult = Type.Object({ replayed: Type.Integer({ description: 'Deliveries given a new attempt (at most 1,000 per call)' }) }, { title: 'WebhookReplayResult' });

export const DeliveryParams = Type.Object({ id: Type.String({ maxLength: 100, description: 'Delivery id (dlv_…)' }) });
