import type { Database, Executor } from '../db/schema.ts';

// The one way a module emits an event: `platform.events.emit(tx, {...})` inside the transaction
// of the change that caused it. The events engine (src/modules/webhooks) writes the immutable
// event and one delivery per subscribed destination in that same transaction, so a rollback
// emits nothing and a commit always delivers (transactional outbox).

/** An agent's webhook as the agents module knows it; deliveries snapshot url and secret. */
export interface AgentDestination {
  agentId: string;
  url: string;
  /** The agent's `whsec_` secret. */
  secret: string;
  /** The agent's `webhook_events`; empty means every call event. */
  events: string[];
  /** The secret before a rotation: it signs `webhook-signature` beside the new one until it expires. */
  previousSecret?: string | null;
  previousSecretExpiresAt?: Date | string | null;
}

export interface EmitInput {
  workspaceId: string;
  /** Event type, e.g. `call.ended`, `voice_session.ended`, `webhook.test`. */
  type: string;
  data: Record<string, unknown>;
  agentId?: string;
  callId?: string;
  /** The agent destination, when the event concerns an agent with a webhook_url. */
  agent?: AgentDestination | null;
  /** Send only to the agent destination (agent webhook tests); the tenant webhook is skipped. */
  agentOnly?: boolean;
  /** Send only to the tenant webhook (tenant webhook tests). */
  tenantOnly?: boolean;
  /**
   * The W3C traceparent of the work emitting the event (a request's WorkspaceContext, a call's or
   * a job's span): its deliveries join that trace. Absent when tracing is off or did not record.
   */
  traceParent?: string | null;
}

export interface EmittedEvent {
  eventId: string;
  deliveryIds: string[];
}

export interface EventEmitter {
  emit(tx: Executor, input: EmitInput): Promise<EmittedEvent>;
  /**
   * An event caused by no row change of its own; a transaction is opened only when someone
   * receives it. Null when nobody does (nothing written, no event id).
   */
  emitAlone(db: Database, input: EmitInput): Promise<EmittedEvent | null>;
}
