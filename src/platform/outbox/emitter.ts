import { sql } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Database, Executor } from '../db/schema.ts';
import { newId } from '../ids.ts';
import { buildEnvelope, eventTypeInfo } from './catalog.ts';
import { attemptOffsets } from './retry-policy.ts';
import type { AgentDestination, EmitInput, EmittedEvent, EventEmitter } from './emit.ts';
import type { TenantEndpoint, TenantEndpointCache } from './tenant-endpoint-cache.ts';

// The events engine's write side (transactional outbox): `emit(tx, input)` writes the immutable
// event and one delivery per subscribed destination with the caller's transaction, and wakes
// the workers once that transaction commits (NOTIFY is delivered only on commit; the in-process
// nudge runs a claim that, on PGlite, queues behind the open transaction).

/** NOTIFY channel the workers LISTEN on (PostgreSQL). */
export const DELIVERY_CHANNEL = 'vap_webhook_deliveries';

export interface EmitterDeps {
  clock: Clock;
  webhooks: { agentSchedule: number[]; tenantSchedule: number[] };
  /** NOTIFY inside the transaction (PostgreSQL: wakes workers of every instance after commit). */
  notifyInTransaction: boolean;
  /**
   * The tenant endpoints emitAlone routes by, kept in process. Only a process whose cache hears
   * the invalidations (the platform's, on the gate bus) may pass one; without it every event
   * reads the table.
   */
  tenantEndpoints?: TenantEndpointCache;
}

/** In-process wake-up of the workers of this process. */
export function createWakeSignal() {
  const listeners = new Set<() => void>();
  return {
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** Wakes the workers after the current job of the event loop (after the caller's commit is issued). */
    nudge() {
      if (listeners.size === 0) return;
      setImmediate(() => {
        for (const listener of listeners) listener();
      });
    },
  };
}
export type WakeSignal = ReturnType<typeof createWakeSignal>;

export function createEventEmitter(deps: EmitterDeps) {
  const wake = createWakeSignal();
  const agentOffsets = attemptOffsets(deps.webhooks.agentSchedule);
  const tenantOffsets = attemptOffsets(deps.webhooks.tenantSchedule);

  /** Tells the workers that deliveries are due (call inside the transaction that made them due). */
  async function announce(tx: Executor): Promise<void> {
    if (deps.notifyInTransaction) await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(tx);
    wake.nudge();
  }

  interface Destinations {
    agent: AgentDestination | null;
    tenant: TenantEndpoint | null;
  }

  const readTenantEndpoint = (executor: Executor, workspaceId: string): Promise<TenantEndpoint | undefined> =>
    executor.selectFrom('webhook_endpoints').select(['url', 'events']).where('workspace_id', '=', workspaceId).executeTakeFirst();

  /**
   * Who receives the event: the agent's webhook (known to the caller) and the tenant webhook,
   * read through `executor`, or through the cache when `cached` (never inside a transaction).
   */
  async function destinationsOf(executor: Executor, input: EmitInput, cached: boolean): Promise<Destinations | null> {
    const info = eventTypeInfo(input.type);
    if (!info) throw new Error(`unknown event type ${input.type}`);
    const isTest = input.type === 'webhook.test';
    const agent = input.agent;
    const toAgent = Boolean(
      !input.tenantOnly && agent && info.agent && agent.url && (isTest || agent.events.length === 0 || agent.events.includes(input.type)),
    );
    let tenant: TenantEndpoint | null = null;
    if (!input.agentOnly) {
      const cache = cached ? deps.tenantEndpoints : undefined;
      const read = () => readTenantEndpoint(executor, input.workspaceId);
      const endpoint = cache ? await cache.lookup(input.workspaceId, read) : await read();
      if (endpoint && (isTest || endpoint.events.includes(input.type))) tenant = endpoint;
    }
    if (!toAgent && !tenant) return null;
    return { agent: toAgent && agent ? agent : null, tenant };
  }

  /**
   * Reads the tenant endpoint in the caller's transaction, not from the cache: that transaction
   * may itself have changed the endpoint (it must see its change), and what it reads could still
   * roll back, so it must not be cached either. emit runs beside the caller's own writes; the
   * per-turn events go through emitAlone.
   */
  async function emit(tx: Executor, input: EmitInput): Promise<EmittedEvent> {
    const destinations = await destinationsOf(tx, input, false);
    if (!destinations) return { eventId: newId('evt'), deliveryIds: [] };
    return write(tx, input, destinations);
  }

  /**
   * An event that changes no row of its own (a transcript line): the destinations are found first
   * (the tenant endpoint through the cache), and only an event that someone receives opens a
   * transaction (on PGlite every statement runs on the event loop, and a live call emits one of
   * these per turn). Null, and no id drawn, when nobody receives it.
   */
  async function emitAlone(db: Database, input: EmitInput): Promise<EmittedEvent | null> {
    const destinations = await destinationsOf(db, input, true);
    if (!destinations) return null;
    return db.transaction().execute((tx) => write(tx, input, destinations));
  }

  async function write(tx: Executor, input: EmitInput, destinations: Destinations): Promise<EmittedEvent> {
    const info = eventTypeInfo(input.type);
    if (!info) throw new Error(`unknown event type ${input.type}`);
    const eventId = newId('evt');
    const now = deps.clock.now();
    const { agent, tenant } = destinations;
    const agentId = input.agentId ?? input.agent?.agentId ?? null;
    const callId = input.callId ?? null;
    const payload = JSON.stringify(buildEnvelope(info.listing, { id: eventId, type: input.type, timestamp: now.toISOString(), data: input.data, callId, agentId }));
    await tx
      .insertInto('webhook_events')
      .values({ id: eventId, workspace_id: input.workspaceId, type: input.type, agent_id: agentId, call_id: callId, payload, created_at: now })
      .execute();

    const common = {
      event_id: eventId,
      // The work emitting the event (a request, a call, a job): its delivery joins that trace.
      trace_parent: input.traceParent ?? null,
      workspace_id: input.workspaceId,
      event_type: input.type,
      agent_id: agentId,
      status: 'pending' as const,
      attempt_count: 0,
      next_trigger: 'scheduled' as const,
      created_at: now,
      updated_at: now,
    };
    const rows = [];
    if (agent) {
      rows.push({
        ...common,
        id: newId('dlv'),
        destination: 'agent' as const,
        url: agent.url,
        secret: agent.secret,
        previous_secret: agent.previousSecret ?? null,
        previous_secret_expires_at: agent.previousSecret ? (agent.previousSecretExpiresAt ?? null) : null,
        ordering_key: callId ? `agent:${agent.agentId}:${callId}` : null,
        max_attempts: agentOffsets.length,
        next_attempt_at: new Date(now.getTime() + agentOffsets[0]),
      });
    }
    if (tenant) {
      rows.push({
        ...common,
        id: newId('dlv'),
        destination: 'tenant' as const,
        url: tenant.url,
        secret: null,
        previous_secret: null,
        previous_secret_expires_at: null,
        ordering_key: callId ? `tenant:${input.workspaceId}:${callId}` : null,
        max_attempts: tenantOffsets.length,
        next_attempt_at: new Date(now.getTime() + tenantOffsets[0]),
      });
    }
    await tx.insertInto('webhook_deliveries').values(rows).execute();
    await announce(tx);
    return { eventId, deliveryIds: rows.map((r) => r.id) };
  }

  return {
    emit,
    emitAlone,
    announce,
    /** Workers of this process subscribe here to be woken after an emit, retry or replay. */
    wake,
  } satisfies EventEmitter & Record<string, unknown>;
}

export type EventEngine = ReturnType<typeof createEventEmitter>;
