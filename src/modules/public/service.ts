import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { AppError, type FieldError, invalidField } from '../../platform/errors.ts';
import type { Mailer } from '../../platform/mailer.ts';
import { type ContactBody, type EventInput, type EventsBody, MAX_EVENT_PROPERTIES_BYTES, type NewsletterState } from './schemas.ts';

// The public utilities: the contact form (stored, then mailed to CONTACT_EMAIL), the newsletter
// (idempotent subscribe and unsubscribe, one row per address that keeps the unsubscription), and
// client-side events (stored as sent, bounded).

export interface PublicServiceDeps {
  db: Database;
  clock: Clock;
  mailer: Mailer;
  logger: FastifyBaseLogger;
  /** Recipient of contact messages; none: they are only stored. */
  contactEmail: string | undefined;
}

// One @, no spaces, a dot in the domain: what a mail server would accept, without pretending to
// implement RFC 5322.
const EMAIL = /^[^\s@]{1,64}@[^\s@.]+(\.[^\s@.]+)+$/;

/** Trimmed and lower-cased (the domain is case-insensitive and no mailbox we send to relies on case), or 422. */
export function normaliseEmail(raw: string, field = 'email'): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) throw invalidField(field, 'must be an email address, such as ada@example.com');
  return email;
}

const EARLIEST_EVENT_MS = Date.parse('2000-01-01T00:00:00.000Z');
/** A client clock may run ahead; further ahead is a wrong clock or made up. */
const MAX_CLOCK_AHEAD_MS = 24 * 3_600_000;

/** Control characters (CR, LF, escapes) become spaces: a name must not shape the mail's header. */
const oneLine = (text: string) => text.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ').trim();

export function createPublicService(deps: PublicServiceDeps) {
  const { db, clock } = deps;

  /** What a schema cannot express: the serialised size and a plausible time (the input guard refuses text jsonb cannot hold). */
  function checkEvents(events: EventInput[], pathOf: (i: number, field: string) => string) {
    const errors: FieldError[] = [];
    const latest = clock.now().getTime() + MAX_CLOCK_AHEAD_MS;
    events.forEach((event, i) => {
      const bytes = Buffer.byteLength(JSON.stringify(event.properties ?? {}));
      if (bytes > MAX_EVENT_PROPERTIES_BYTES) {
        errors.push({ path: pathOf(i, 'properties'), message: `is ${bytes} bytes serialised; at most ${MAX_EVENT_PROPERTIES_BYTES}` });
      }
      const at = event.timestamp === undefined ? undefined : Date.parse(event.timestamp);
      if (at !== undefined && !(at >= EARLIEST_EVENT_MS && at <= latest)) {
        errors.push({ path: pathOf(i, 'timestamp'), message: 'must be between 2000-01-01 and one day from now' });
      }
    });
    if (errors.length > 0) {
      throw new AppError('validation_failed', `${errors[0]?.path}: ${errors[0]?.message}`, { errors: errors.slice(0, 20) });
    }
  }

  return {
    async contact(body: ContactBody): Promise<void> {
      const email = normaliseEmail(body.email);
      const now = clock.now();
      const row = await db
        .insertInto('contact_messages')
        .values({ name: body.name, email, message: body.message, created_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (!deps.contactEmail) return;
      // Stored first: a mail server that is down loses no message, it is logged and kept.
      await deps.mailer
        .send({
          to: deps.contactEmail,
          subject: `Contact form: ${oneLine(body.name).slice(0, 100)}`,
          text: `From: ${oneLine(body.name)} <${email}>\nReceived: ${now.toISOString()}\n\n${body.message}\n`,
          meta: { contact_message_id: String(row.id), reply_to: email },
        })
        .catch((err: unknown) => deps.logger.warn({ err, contactMessageId: String(row.id) }, 'contact message stored but its mail notice failed'));
    },

    async subscribe(raw: string): Promise<NewsletterState> {
      const email = normaliseEmail(raw);
      const now = clock.now();
      // One row per address: a repeated subscribe changes nothing; one after an unsubscribe resubscribes.
      await db
        .insertInto('newsletter_subscriptions')
        .values({ email, subscribed_at: now, unsubscribed_at: null, created_at: now, updated_at: now })
        .onConflict((oc) =>
          oc.column('email').doUpdateSet({ subscribed_at: now, unsubscribed_at: null, updated_at: now }).where('newsletter_subscriptions.unsubscribed_at', 'is not', null),
        )
        .execute();
      return { email, subscribed: true };
    },

    async unsubscribe(raw: string): Promise<NewsletterState> {
      const email = normaliseEmail(raw);
      const now = clock.now();
      // An unknown address is not an error (nothing says whether it was subscribed); a known one keeps its row.
      await db
        .updateTable('newsletter_subscriptions')
        .set({ unsubscribed_at: now, updated_at: now })
        .where('email', '=', email)
        .where('unsubscribed_at', 'is', null)
        .execute();
      return { email, subscribed: false };
    },

    async ingest(body: EventsBody): Promise<number> {
      const batch = 'events' in body;
      const events = batch ? body.events : [body];
      checkEvents(events, (i, field) => (batch ? `events.${i}.${field}` : field));
      const now = clock.now();
      await db
        .insertInto('public_events')
        .values(
          events.map((event) => ({
            name: event.name,
            properties: JSON.stringify(event.properties ?? {}),
            anonymous_id: event.anonymous_id ?? null,
            occurred_at: event.timestamp ? new Date(event.timestamp) : now,
            received_at: now,
          })),
        )
        .execute();
      return events.length;
    },
  };
}

export type PublicService = ReturnType<typeof createPublicService>;
