import type { Clock } from '../../platform/clock.ts';
import type { Database, Executor } from '../../platform/db/schema.ts';
import { AppError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { CallJournal } from '../calls/journal.ts';
import { checkOutbound } from '../calls/preconditions.ts';
import type { CallSimulation } from '../calls/tables.ts';
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
  telephonyProvider: 'sandbox' | 'twilio';
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

  /** Queues the schedule's call and marks it dispatched (inside `tx`, the row locked); throws the refusal. */
  async function fire(tx: Executor, row: ScheduleRow, now: Date): Promise<ScheduleRow> {
    const { to, from } = await checkOutbound(tx, row.workspace_id, { agent_id: row.agent_id, to: row.to_number, from: row.from_number }, { telephonyProvider: deps.telephonyProvider });
    const call = await journal.queue(tx, {
      id: newId('call'),
      workspace_id: row.workspace_id,
      agent_id: row.agent_id,
      direction: 'outbound',
      from_number: from,
      to_number: to,
      provider: deps.telephonyProvider,
      variables: row.variables as Record<string, string>,
      metadata: row.metadata as Record<string, unknown>,
      simulation: (row.simulation as CallSimulation | null) ?? null,
      schedule_id: row.id,
    });
    return tx
      .updateTable('schedules')
      .set({ status: 'dispatched', call_id: call.id, dispatched_at: now, late: isLate(row, now), updated_at: now })
      .where('id', '=', row.id)
      .where('status', '=', 'scheduled')
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  function isLate(row: ScheduleRow, now: Date): boolean {
    return now.getTime() - new Date(row.scheduled_at).getTime() > LATE_AFTER_MS;
  }

  return {
    fire,

    /**
     * Fires up to `limit` due schedules in one transaction: locked in one statement (SKIP LOCKED),
     * each dispatched or failed. Answers the rows as they are now.
     */
    async fireDue(limit: number): Promise<ScheduleRow[]> {
      const fired = await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const due = await repo.lockDue(tx, now, limit);
        const out: ScheduleRow[] = [];
        for (const row of due) {
          try {
            out.push(await fire(tx, row, now));
          } catch (error) {
            // Every refusal is thrown by the checks, before this row wrote anything.
            if (!(error instanceof AppError)) throw error;
            const failed = await tx
              .updateTable('schedules')
              .set({ status: 'failed', error: JSON.stringify(reasonOf(error)), dispatched_at: now, late: isLate(row, now), updated_at: now })
              .where('id', '=', row.id)
              .returningAll()
              .executeTakeFirstOrThrow();
            out.push(failed);
          }
        }
        return out;
      });
      if (fired.some((row) => row.status === 'dispatched')) deps.nudgeCalls();
      return fired;
    },
  };
}

export type ScheduleDispatcher = ReturnType<typeof createScheduleDispatcher>;
