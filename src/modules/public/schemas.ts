import { type Static, Type } from 'typebox';
import { Timestamp } from '../../platform/http/schemas.ts';

// Bodies and answers of the public utility endpoints (no authentication): contact form,
// newsletter, client-side events. Every field is bounded; the email is checked and normalised by
// the service (it may arrive with surrounding spaces).

/** Longest serialised `properties` of one event, in bytes of UTF-8 JSON. */
export const MAX_EVENT_PROPERTIES_BYTES = 8 * 1024;
/** Events in one batch. */
export const MAX_EVENT_BATCH = 100;

const EmailInput = Type.String({ minLength: 3, maxLength: 320, description: 'An email address; surrounding spaces are trimmed and it is stored lower-cased', examples: ['ada@example.com'] });

export const ContactBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, examples: ['Ada Lovelace'] }),
    email: EmailInput,
    message: Type.String({ minLength: 1, maxLength: 5000, examples: ['We would like a demo for our clinic.'] }),
  },
  { additionalProperties: false },
);
export type ContactBody = Static<typeof ContactBody>;

export const Accepted = Type.Object({ status: Type.Literal('accepted') }, { title: 'ContactAccepted' });

export const NewsletterBody = Type.Object({ email: EmailInput }, { additionalProperties: false });
export type NewsletterBody = Static<typeof NewsletterBody>;

export const NewsletterState = Type.Object(
  {
    email: Type.String({ description: 'The address as stored (normalised)' }),
    subscribed: Type.Boolean(),
  },
  { title: 'NewsletterState' },
);
export type NewsletterState = Static<typeof NewsletterState>;

export const EventInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, examples: ['pricing_viewed'] }),
    properties: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
        maxProperties: 50,
        description: `Free-form event data; at most 50 keys and ${MAX_EVENT_PROPERTIES_BYTES} bytes serialised`,
      }),
    ),
    anonymous_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The client\'s anonymous visitor id' })),
    timestamp: Type.Optional({ ...Timestamp, description: 'When it happened (default: when received)' }),
  },
  { additionalProperties: false, title: 'ClientEvent' },
);
export type EventInput = Static<typeof EventInput>;

export const EventBatch = Type.Object(
  { events: Type.Array(EventInput, { minItems: 1, maxItems: MAX_EVENT_BATCH, description: `1..${MAX_EVENT_BATCH} events; a longer batch is 422` }) },
  { additionalProperties: false, title: 'ClientEventBatch' },
);

export type EventsBody = Static<typeof EventInput> | Static<typeof EventBatch>;
/**
 * One event, or `{events: [...]}`. An if/then/else rather than anyOf: a body is checked against
 * the one form it has (an `events` field makes it a batch), so a 422 lists that form's errors only.
 */
export const EventsBody = Type.Unsafe<EventsBody>({
  type: 'object',
  description: 'One event, or a batch of them in `events`',
  if: { type: 'object', required: ['events'] },
  // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword
  then: EventBatch,
  else: EventInput,
});

export const EventsAccepted = Type.Object({ accepted: Type.Integer({ description: 'Events stored' }) }, { title: 'EventsAccepted' });
