import type { Json, Timestamp } from '../../platform/db/foundation-tables.ts';

// Tables of the events engine (migration 0002), in the Svix model:
// event (immutable) → one delivery per destination → one attempt row per HTTP request.

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export const DESTINATIONS = ['agent', 'tenant'] as const;
export type Destination = (typeof DESTINATIONS)[number];

/** The workspace's tenant webhook (one per workspace). Secrets are kept in clear: they key HMACs. */
export interface WebhookEndpointsTable {
  workspace_id: string;
  url: string;
  secret: string;
  /** The secret before the last rotation; still signs beside the new one until it expires. */
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  events: Json<string[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookEventsTable {
  id: string;
  workspace_id: string;
  type: string;
  agent_id: string | null;
  call_id: string | null;
  /** The envelope exactly as sent (JSON text), so every attempt signs the same bytes. */
  payload: string;
  created_at: Timestamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  workspace_id: string;
  event_type: string;
  destination: Destination;
  agent_id: string | null;
  /** Agent: snapshot at emit. Tenant: refreshed from the tenant webhook at each claim. */
  url: string;
  /**
   * Agent: the secret at emit, signing only when the agent row is unknown (the agent's current
   * secrets sign otherwise). Tenant: null (the tenant webhook's current secrets sign).
   */
  secret: string | null;
  /** Agent: the previous secret at emit (with the snapshot above), signing beside it until it expires. */
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  /** Deliveries with the same key get their first attempts in id order (one call's events). */
  ordering_key: string | null;
  status: DeliveryStatus;
  attempt_count: number;
  max_attempts: number;
  /** What caused the attempt that is due: the schedule, or a retry/replay by the user. */
  next_trigger: 'scheduled' | 'manual';
  first_attempt_at: Timestamp | null;
  /** When the next attempt is due; while leased, the lease expiry (so an expired lease is due). */
  next_attempt_at: Timestamp | null;
  last_attempt_at: Timestamp | null;
  last_status_code: number | null;
  last_error: string | null;
  lease_holder: string | null;
  lease_expires_at: Timestamp | null;
  /** W3C traceparent of the work that emitted the event (null when tracing is off). */
  trace_parent: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  workspace_id: string;
  attempt: number;
  trigger: 'scheduled' | 'manual';
  started_at: Timestamp;
  duration_ms: number;
  status_code: number | null;
  /** At most 2 KB of the response body. */
  response_excerpt: string | null;
  error: string | null;
}

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
