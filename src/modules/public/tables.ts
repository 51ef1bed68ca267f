import type { Generated } from 'kysely';
import type { Json, Timestamp } from '../../platform/db/foundation-tables.ts';

// Tables of the public utilities (migration 0013; its demo_setup is the demo module's).

export interface ContactMessagesTable {
  id: Generated<string>;
  name: string;
  email: string;
  message: string;
  created_at: Timestamp;
}

export interface NewsletterSubscriptionsTable {
  /** Normalised: trimmed and lower-cased. */
  email: string;
  /** The latest subscription. */
  subscribed_at: Timestamp;
  /** Set by an unsubscribe, cleared by a new subscribe; the row stays as the record. */
  unsubscribed_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PublicEventsTable {
  id: Generated<string>;
  name: string;
  properties: Json<Record<string, unknown>>;
  anonymous_id: string | null;
  /** The client's timestamp, else the time received. */
  occurred_at: Timestamp;
  received_at: Timestamp;
}

export interface PublicTables {
  contact_messages: ContactMessagesTable;
  newsletter_subscriptions: NewsletterSubscriptionsTable;
  public_events: PublicEventsTable;
}
