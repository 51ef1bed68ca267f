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
          d.first_attempt_at, d.next_trigger
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
  holder: string;
  now: Date;
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
 * Applies an attempt's result while this holder still owns this attempt's lease: the fenced
 * update and the attempt row in one statement, so the result is applied whole or not at all (a
 * lost lease writes nothing). Answers whether it was applied.
 */
export async function recordAttempt(database: DatabaseHandle, input: AttemptRecord): Promise<boolean> {
  const { row, now, holder } = input;
  const applied = await workerStatement(database, (executor) =>
    sql<{ id: string }>`
        with updated as (
          update webhook_deliveries set
            status = ${input.plan.status},
            next_attempt_at = ${input.plan.nextAttemptAt}::timestamptz,
            next_trigger = 'scheduled',
            lease_holder = null,
            lease_expires_at = null,
            last_status_code = ${input.statusCode}::integer,
            last_error = ${input.lastError}::text,
            updated_at = ${now}::timestamptz
          where id = ${row.id} and status = 'pending' and lease_holder = ${holder} and attempt_count = ${row.attempt_count}::integer
          returning id, workspace_id
        )
        insert into webhook_attempts (id, delivery_id, workspace_id, attempt, trigger, started_at, duration_ms, status_code, response_excerpt, error)
        select ${newId('att')}::text, u.id, u.workspace_id, ${row.attempt_count}::integer, ${row.next_trigger}::text, ${input.startedAt}::timestamptz,
          ${input.durationMs}::integer, ${input.statusCode}::integer, ${input.excerpt}::text, ${input.error}::text
        from updated u
        returning id`.execute(executor),
  );
  return applied.rows.length === 1;
}
