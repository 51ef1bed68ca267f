import { sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import type { CallRow } from './repo.ts';

// The dialer's statements, apart from the loop that runs them (src/modules/calls/worker.ts).

export type { CallRow };

/**
 * Claims queued calls, oldest first, within each workspace's live-call limit, and moves them to
 * `ringing` under this holder's lease. The workspace row is locked for the claim (SKIP LOCKED: a
 * workspace another worker is claiming for is left to it), so the limit holds across workers and
 * instances: the live count and the claim happen under the same lock.
 */
export async function claimQueuedCalls(db: Database, clock: Clock, input: { holder: string; limit: number; leaseMs: number; defaultMaxConcurrent: number }): Promise<CallRow[]> {
  if (input.limit <= 0) return [];
  return db.transaction().execute(async (tx) => {
    const now = clock.now();
    const leaseUntil = new Date(now.getTime() + input.leaseMs);
    const workspaces = await sql<{ id: string; max: number }>`
      select w.id, coalesce(w.max_concurrent_calls, ${input.defaultMaxConcurrent}::integer) as max
      from workspaces w
      where w.id in (select distinct q.workspace_id from calls q where q.status = 'queued' and q.direction <> 'web' limit 200)
      order by w.id
      for update of w skip locked`.execute(tx);
    const claimed: CallRow[] = [];
    for (const workspace of workspaces.rows) {
      const room = Math.min(input.limit - claimed.length, workspace.max);
      if (room <= 0) break;
      const rows = await sql<CallRow>`
        with live as (
          select count(*)::integer as n from calls where workspace_id = ${workspace.id} and status in ('ringing', 'in_progress')
        ), picked as (
          select c.id from calls c
          where c.workspace_id = ${workspace.id} and c.status = 'queued' and c.direction <> 'web'
          order by c.created_at, c.id
          limit greatest(0, least(${room}::integer, ${workspace.max}::integer - (select n from live)))
          for update skip locked
        )
        update calls c set status = 'ringing', started_at = ${now}, lease_holder = ${input.holder}, lease_expires_at = ${leaseUntil},
          last_renewed_at = ${now}, updated_at = ${now}
        from picked where c.id = picked.id
        returning c.*`.execute(tx);
      for (const row of rows.rows) {
        await sql`insert into call_status_events (call_id, seq, status, at)
          select ${row.id}, coalesce(max(seq), 0) + 1, 'ringing', ${now} from call_status_events where call_id = ${row.id}`.execute(tx);
      }
      claimed.push(...rows.rows);
    }
    return claimed;
  });
}

/** Live calls whose owner stopped renewing their lease (its process died). */
export async function findLostCalls(db: Database, clock: Clock, limit = 100): Promise<CallRow[]> {
  return db
    .selectFrom('calls')
    .selectAll()
    .where('status', 'in', ['ringing', 'in_progress'])
    .where('lease_expires_at', '<', clock.now())
    .orderBy('lease_expires_at')
    .limit(limit)
    .execute();
}
