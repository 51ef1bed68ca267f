import { sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Executor } from '../../platform/db/schema.ts';
import type { AppError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { CallJournal, NewCall } from '../calls/journal.ts';
import { checkOutboundMany } from '../calls/preconditions.ts';
import type { CallSimulation } from '../calls/tables.ts';
import type { TelephonyProvider } from '../../ports/telephony.ts';
import type { ScheduleRow, SchedulesRepo } from './repo.ts';

// Firing a schedule: the call is queued through the call journal (so the call runtime runs it like
// any other outbound call, after the same checks as POST /v1/calls/outbound) and the schedule
// becomes `dispatched`, in one transaction that holds the schedule's row lock: a schedule fires
// once, whichever worker, instance or `run` request gets to it. A schedule the worker cannot place
// (do-not-call, no funds, agent deleted, no caller id) becomes `failed` with the reason.

/** A schedule fired more than this long after its time is `late` (the worker was not running then). */
export const LATE_AFTER_MS = 5000;

export interface DispatcherDeps {
  db: Database;
  clock: Clock;
  journal: CallJournal;
  repo: SchedulesRepo;
  /** Its name is each call's `provider`; its caller ids decide the outbound checks. */
  telephony: Pick<TelephonyProvider, 'name' | 'ownsCallerIds'>;
  /** Wakes the dialer after calls were queued. */
  nudgeCalls(): void;
}

/** The reason a refusal gives a failed schedule. */
function reasonOf(error: AppError): { code: string; message: string } {
  if (error.code === 'validation_failed' && error.errors?.[0]?.path === 'agent_id') return { code: 'agent_not_found', message: 'The agent was deleted.' };
  return { code: error.code, message: error.message.slice(0, 500) };
}

export function createScheduleDispatcher(deps: DispatcherDeps) {
  const { db, clock, journal, repo } = deps;

  const isLate = (row: ScheduleRow, now: Date) => now.getTime() - new Date(row.scheduled_at).getTime() > LATE_AFTER_MS;

  /**
   * Fires locked schedules (inside `tx`): one check of them all, their calls queued, each row
   * `dispatched` or (refused) `failed`, a few statements however many rows. Answers the rows as
   * they are now, and the refusals by schedule id.
   */
  async function fireRows(tx: Executor, rows: ScheduleRow[], now: Date): Promise<{ rows: ScheduleRow[]; refusals: Map<string, AppError> }> {
    const verdicts = await checkOutboundMany(
      tx,
      rows.map((row) => ({ workspaceId: row.workspace_id, agent_id: row.agent_id, to: row.to_number, from: row.from_number })),
      { ownsCallerIds: deps.telephony.ownsCallerIds },
    );
    const placed: Array<{ row: ScheduleRow; call: NewCall }> = [];
    const refusals = new Map<string, AppError>();
    rows.forEach((row, i) => {
      const verdict = verdicts[i];
      if (!verdict.ok) {
        refusals.set(row.id, verdict.error);
        return;
      }
      placed.push({
        row,
        call: {
          id: newId('call'),
          workspace_id: row.workspace_id,
          agent_id: row.agent_id,
          direction: 'outbound',
          from_number: verdict.from,
          to_number: verdict.to,
          provider: deps.telephony.name,
          variables: row.variables as Record<string, string>,
          metadata: row.metadata as Record<string, unknown>,
          simulation: (row.simulation as CallSimulation | null) ?? null,
          schedule_id: row.id,
        },
      });
    });
    await journal.queueMany(
      tx,
      placed.map((p) => p.call),
    );
    const outcomes = [
      ...placed.map((p) => ({ id: p.row.id, status: 'dispatched', call_id: p.call.id, late: isLate(p.row, now), error: null as string | null })),
      ...rows.filter((row) => refusals.has(row.id)).map((row) => ({ id: row.id, status: 'failed', call_id: null, late: isLate(row, now), error: JSON.stringify(reasonOf(refusals.get(row.id) as AppError)) })),
    ];
    const updated = await sql<ScheduleRow>`
      update schedules s set status = v.status, call_id = v.call_id, late = v.late, error = v.error::jsonb, dispatched_at = ${now}, updated_at = ${now}
      from (values ${sql.join(outcomes.map((o) => sql`(${o.id}, ${o.status}, ${o.call_id}::text, ${o.late}::boolean, ${o.error}::text)`))}) as v(id, status, call_id, late, error)
      where s.id = v.id and s.status = 'scheduled'
      returning s.*`.execute(tx);
    if (updated.rows.length !== rows.length) throw new Error('schedules changed while locked');
    const byId = new Map(updated.rows.map((row) => [row.id, row]));
    return { rows: rows.map((row) => byId.get(row.id) as ScheduleRow), refusals };
  }

  return {
    /** Fires one schedule locked in `tx` (`run`): dispatched, or the refusal thrown (the caller's transaction then writes nothing). */
    async fire(tx: Executor, row: ScheduleRow, now: Date): Promise<ScheduleRow> {
      const fired = await fireRows(tx, [row], now);
      const refusal = fired.refusals.get(row.id);
      if (refusal) throw refusal;
      return fired.rows[0];
    },

    /**
     * Fires up to `limit` due schedules in one transaction: locked in one statement (SKIP LOCKED),
     * each dispatched or failed. Answers the rows as they are now.
     */
    async fireDue(limit: number): Promise<ScheduleRow[]> {
      const fired = await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const due = await repo.lockDue(tx, now, limit);
        return due.length === 0 ? [] : (await fireRows(tx, due, now)).rows;
      });
      if (fired.some((row) => row.status === 'dispatched')) deps.nudgeCalls();
      return fired;
    },
  };
}

export type ScheduleDispatcher = ReturnType<typeof createScheduleDispatcher>;
