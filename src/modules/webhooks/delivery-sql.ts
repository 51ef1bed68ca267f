import { sql } from 'kysely';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { workerStatement } from '../../platform/jobs/lease.ts';
import type { Plan } from '../../platform/outbox/retry-policy.ts';
import type { Destination } from './tables.ts';

// The delivery queue's statements, apart from the job that runs them (./worker.ts). Each is ONE
// statement, atomic on its own, run through workerStatement (no WAL flush wait on PostgreSQL).

export interface ClaimedDelivery {
  id: string;
  event_id: string;
  workspace_id: string;
  destination: Destination;
  url: string;
  secret: string | null;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  attempt_count: number;
  max_attempts: number;
  first_attempt_at: Date;
  next_trigger: 'scheduled' | 'manual';
  payload: string;
  endpoint_secret: string | null;
  endpoint_previous_secret: string | null;
  endpoint_previous_expires_at: Date | null;
  /** The agent's secrets now (null when the agent row is unknown: the snapshot signs). */
  agent_secret: string | null;
  agent_previous_secret: string | null;
  agent_rotated_at: Date | null;
  /** The emitting work's traceparent (null when tracing was off). */
  trace_parent: string | null;
}

/** Rows whose worker died during their last allowed attempt: nothing is left to try. */
export async function buryLostLastAttempts(database: DatabaseHandle, now: Date): Promise<void> {
  await database.db
    .updateTable('webhook_deliveries')
    .set({ status: 'dead', next_attempt_at: null, lease_holder: null, lease_expires_at: null, last_error: 'the worker was lost during the last attempt', updated_at: now })
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where(sql<boolean>`attempt_count >= max_attempts`)
    .execute();
}

/**
 * The claim, committed before any network I/O: picks due rows with FOR UPDATE SKIP LOCKED (a
 * row of an ordering key waits for the earlier ones), counts the attempt and sets the lease
 * (holder + expiry; next_attempt_at moves to the expiry, so a row whose worker died is simply
 * due again when the lease runs out). A tenant delivery takes the endpoint's current URL; each
 * row comes with its payload and its destination's current secrets.
 */
export async function claimDeliveries(
  database: DatabaseHandle,
  input: { holder: string; now: Date; leaseMs: number; limit: number },
): Promise<ClaimedDelivery[]> {
  const { holder, now, limit } = input;
  const leaseUntil = new Date(now.getTime() + input.leaseMs);
  const result = await workerStatement(database, (executor) => sql<ClaimedDelivery>`
      with due as materialized (
        select d.id from webhook_deliveries d
        where d.status = 'pending' and d.next_attempt_at <= ${now} and d.attempt_count < d.max_attempts
          and (d.ordering_key is null or not exists (
            select 1 from webhook_deliveries p
            where p.ordering_key = d.ordering_key and p.status = 'pending' and p.id < d.id
              and (p.attempt_count = 0 or (p.attempt_count = 1 and p.lease_expires_at > ${now}))))
        order by d.next_attempt_at, d.id
        limit ${limit}
        for update of d skip locked
      ), claimed as (
        update webhook_deliveries d set
          attempt_count = d.attempt_count + 1,
          lease_holder = ${holder},
          lease_expires_at = ${leaseUntil},
          next_attempt_at = ${leaseUntil},
          first_attempt_at = coalesce(d.first_attempt_at, ${now}),
          last_attempt_at = ${now},
          updated_at = ${now},
          url = case when d.destination = 'tenant'
            then coalesce((select w.url from webhook_endpoints w where w.workspace_id = d.workspace_id), d.url)
            else d.url end
        from due where d.id = due.id
        returning d.id, d.event_id, d.workspace_id, d.destination, d.agent_id, d.url, d.secret, d.previous_secret, d.previous_secret_expires_at, d.attempt_count, d.max_attempts,
          d.first_attempt_at, d.next_trigger, d.trace_parent
      )
      select c.*, e.payload, w.secret as endpoint_secret, w.previous_secret as endpoint_previous_secret,
        w.previous_secret_expires_at as endpoint_previous_expires_at,
        a.webhook_secret as agent_secret, a.previous_webhook_secret as agent_previous_secret, a.webhook_secret_rotated_at as agent_rotated_at
      from claimed c
      join webhook_events e on e.id = c.event_id
      left join webhook_endpoints w on c.destination = 'tenant' and w.workspace_id = c.workspace_id
      left join agents a on c.destination = 'agent' and a.id = c.agent_id and a.workspace_id = c.workspace_id
      order by c.id`.execute(executor));
  return result.rows.map((r) => ({
    ...r,
    first_attempt_at: new Date(r.first_attempt_at),
    previous_secret_expires_at: r.previous_secret_expires_at ? new Date(r.previous_secret_expires_at) : null,
    endpoint_previous_expires_at: r.endpoint_previous_expires_at ? new Date(r.endpoint_previous_expires_at) : null,
    agent_rotated_at: r.agent_rotated_at ? new Date(r.agent_rotated_at) : null,
  }));
}

export interface AttemptRecord {
  row: Pick<ClaimedDelivery, 'id' | 'attempt_count' | 'next_trigger'>;
  /** The delivery's state after this attempt. */
  plan: Plan;
  lastError: string | null;
  /** The attempt row. */
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  excerpt: string | null;
  error: string | null;
}

/**
 * Applies attempts' results while this holder still owns each attempt's lease: the fenced updates
 * and their attempt rows in one statement, so each result is applied whole or not at all (a lost
 * lease writes nothing). Answers the ids of the deliveries whose result was applied.
 */
export async function recordAttempts(database: DatabaseHandle, input: { holder: string; now: Date; records: AttemptRecord[] }): Promise<Set<string>> {
  const { records, now, holder } = input;
  if (records.length === 0) return new Set();
  const column = <T>(pick: (record: AttemptRecord) => T) => records.map(pick);
  const applied = await workerStatement(database, (executor) =>
    sql<{ delivery_id: string }>`
        with input as (
          select * from unnest(
            ${column((r) => r.row.id)}::text[], ${column((r) => r.row.attempt_count)}::integer[], ${column((r) => r.plan.status)}::text[],
            ${column((r) => r.plan.nextAttemptAt?.toISOString() ?? null)}::timestamptz[], ${column((r) => r.statusCode)}::integer[],
            ${column((r) => r.lastError)}::text[], ${column(() => newId('att'))}::text[], ${column((r) => r.row.next_trigger)}::text[],
            ${column((r) => r.startedAt.toISOString())}::timestamptz[], ${column((r) => r.durationMs)}::integer[],
            ${column((r) => r.excerpt)}::text[], ${column((r) => r.error)}::text[]
          ) as v(id, attempt, status, next_at, status_code, last_error, attempt_id, trigger, started_at, duration_ms, excerpt, error)
        ), updated as (
          update webhook_deliveries d set
            status = v.status,
            next_attempt_at = v.next_at,
            next_trigger = 'scheduled',
            lease_holder = null,
            lease_expires_at = null,
            last_status_code = v.status_code,
            last_error = v.last_error,
            updated_at = ${now}::timestamptz
          from input v
          where d.id = v.id and d.status = 'pending' and d.lease_holder = ${holder} and d.attempt_count = v.attempt
          returning d.id, d.workspace_id
        )
        insert into webhook_attempts (id, delivery_id, workspace_id, attempt, trigger, started_at, duration_ms, status_code, response_excerpt, error)
        select v.attempt_id, u.id, u.workspace_id, v.attempt, v.trigger, v.started_at, v.duration_ms, v.status_code, v.excerpt, v.error
        from updated u join input v on v.id = u.id
        returning delivery_id`.execute(executor),
  );
  return new Set(applied.rows.map((r) => r.delivery_id));
}

/**
 * Attempt results written in batches: while one batch is being written, the results that arrive
 * queue for the next (one statement for many deliveries under load, none waiting when idle).
 * Each caller learns whether its own result was applied.
 */
export function createAttemptRecorder(database: DatabaseHandle, options: { holder: string; now: () => Date; maxBatch?: number }) {
  const maxBatch = options.maxBatch ?? 200;
  let queued: Array<{ record: AttemptRecord; settle: (applied: boolean) => void; fail: (error: unknown) => void }> = [];
  let writing = false;

  async function writeQueued(): Promise<void> {
    writing = true;
    while (queued.length > 0) {
      const batch = queued.slice(0, maxBatch);
      queued = queued.slice(batch.length);
      try {
        const applied = await recordAttempts(database, { holder: options.holder, now: options.now(), records: batch.map((b) => b.record) });
        for (const item of batch) item.settle(applied.has(item.record.row.id));
      } catch (error) {
        for (const item of batch) item.fail(error);
      }
    }
    writing = false;
  }

  return {
    /** Queues one result; resolves once it is written, with whether it was applied. */
    record(record: AttemptRecord): Promise<boolean> {
      return new Promise<boolean>((settle, fail) => {
        queued.push({ record, settle, fail });
        if (!writing) void writeQueued();
      });
    },
  };
}
