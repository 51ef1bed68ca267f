import { sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import { invalidField, invalidState, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { type Page, pageRequest, toPage } from '../../platform/pagination.ts';
import type { TelephonyProvider } from '../../ports/telephony.ts';
import { checkOutbound } from '../calls/preconditions.ts';
import type { ScheduleDispatcher } from './dispatch.ts';
import type { ScheduleRow, SchedulesRepo } from './repo.ts';
import type { ScheduleCreate, ScheduleListQuery, ScheduleUpdate } from './schemas.ts';

// Schedules: create, read, change while still scheduled, cancel, and fire now (`run`). The timed
// firing is the worker's (worker.ts); both fire through the dispatcher.

/** NOTIFY channel the schedule workers LISTEN on (PostgreSQL): a schedule was created or moved. */
export const SCHEDULES_CHANNEL = 'schedules_due';
/** How far in the past scheduled_at may be (clock skew between client and server); it then fires at once. */
export const PAST_GRACE_MS = 5000;
const MAX_AHEAD_MS = 366 * 24 * 3600 * 1000;

export interface SchedulesServiceDeps {
  database: DatabaseHandle;
  clock: Clock;
  repo: SchedulesRepo;
  dispatcher: ScheduleDispatcher;
  telephony: Pick<TelephonyProvider, 'ownsCallerIds'>;
  /** Wakes this process's schedule worker (a schedule was created or moved). */
  wake(): void;
  /** Wakes the dialer after `run` queued a call. */
  nudgeCalls(): void;
}

export function present(row: ScheduleRow) {
  const iso = (at: Date | string | null) => (at === null ? null : new Date(at).toISOString());
  return {
    id: row.id,
    agent_id: row.agent_id,
    to: row.to_number,
    from: row.from_number,
    scheduled_at: new Date(row.scheduled_at).toISOString(),
    variables: row.variables as Record<string, string>,
    metadata: row.metadata as Record<string, unknown>,
    simulation: (row.simulation as never) ?? null,
    status: row.status,
    call_id: row.call_id,
    late: row.late,
    dispatched_at: iso(row.dispatched_at),
    canceled_at: iso(row.canceled_at),
    error: (row.error as { code: string; message: string } | null) ?? null,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}
export type PresentedSchedule = ReturnType<typeof present>;

export function createSchedulesService(deps: SchedulesServiceDeps) {
  const { clock, repo, dispatcher } = deps;
  const db = deps.database.db;

  function when(raw: string): Date {
    const at = new Date(raw);
    const now = clock.now().getTime();
    if (Number.isNaN(at.getTime())) throw invalidField('scheduled_at', 'must be an ISO 8601 date-time');
    if (at.getTime() < now - PAST_GRACE_MS) throw invalidField('scheduled_at', 'is in the past');
    if (at.getTime() > now + MAX_AHEAD_MS) throw invalidField('scheduled_at', 'is more than 366 days ahead');
    return at;
  }

  /** Wakes the workers of this process now, and (PostgreSQL) those of every instance. */
  async function wakeWorkers(): Promise<void> {
    deps.wake();
    if (deps.database.kind === 'postgres') await sql`select pg_notify(${SCHEDULES_CHANNEL}, '')`.execute(db);
  }

  async function scheduleOf(workspaceId: string, id: string): Promise<ScheduleRow> {
    const row = await repo.find(db, workspaceId, id);
    if (!row) throw notFound('schedule');
    return row;
  }

  /** The row locked in `tx`, and 409 unless it is still scheduled. */
  async function lockScheduled(tx: typeof db, workspaceId: string, id: string, doing: string): Promise<ScheduleRow> {
    const row = await repo.findForUpdate(tx, workspaceId, id);
    if (!row) throw notFound('schedule');
    if (row.status !== 'scheduled') throw invalidState(`The schedule is ${row.status}: only a scheduled one can be ${doing}.`);
    return row;
  }

  return {
    scheduleOf,

    async create(workspaceId: string, body: ScheduleCreate): Promise<ScheduleRow> {
      const scheduledAt = when(body.scheduled_at);
      // The wallet is read when the call is placed: it may be topped up before then.
      const checked = await checkOutbound(db, workspaceId, body, { ownsCallerIds: deps.telephony.ownsCallerIds, funds: false });
      const now = clock.now();
      const row = await db
        .insertInto('schedules')
        .values({
          id: newId('sch'),
          workspace_id: workspaceId,
          agent_id: body.agent_id,
          to_number: checked.to,
          from_number: body.from ? checked.from : null,
          scheduled_at: scheduledAt,
          variables: JSON.stringify(body.variables ?? {}),
          metadata: JSON.stringify(body.metadata ?? {}),
          simulation: body.simulation ? JSON.stringify(body.simulation) : null,
          status: 'scheduled',
          late: false,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await wakeWorkers();
      return row;
    },

    async list(workspaceId: string, query: ScheduleListQuery): Promise<Page<PresentedSchedule>> {
      const page = pageRequest(query);
      const rows = await repo.list(db, workspaceId, page, { status: query.status, agent_id: query.agent_id });
      return toPage(rows, page, (r) => r.id, present);
    },

    /** Changes a schedule still `scheduled` (409 invalid_state otherwise); the result is checked as a new one. */
    async update(workspaceId: string, id: string, patch: ScheduleUpdate): Promise<ScheduleRow> {
      const row = await db.transaction().execute(async (tx) => {
        const current = await lockScheduled(tx, workspaceId, id, 'changed');
        const merged = {
          agent_id: patch.agent_id ?? current.agent_id,
          to: patch.to ?? current.to_number,
          from: patch.from === undefined ? current.from_number : patch.from,
        };
        const checked = await checkOutbound(tx, workspaceId, merged, { ownsCallerIds: deps.telephony.ownsCallerIds, funds: false });
        return tx
          .updateTable('schedules')
          .set({
            agent_id: merged.agent_id,
            to_number: checked.to,
            from_number: merged.from ? checked.from : null,
            ...(patch.scheduled_at !== undefined ? { scheduled_at: when(patch.scheduled_at) } : {}),
            ...(patch.variables !== undefined ? { variables: JSON.stringify(patch.variables) } : {}),
            ...(patch.metadata !== undefined ? { metadata: JSON.stringify(patch.metadata) } : {}),
            ...(patch.simulation !== undefined ? { simulation: patch.simulation ? JSON.stringify(patch.simulation) : null } : {}),
            updated_at: clock.now(),
          })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      if (patch.scheduled_at !== undefined) await wakeWorkers();
      return row;
    },

    /** scheduled → canceled; canceling a canceled one answers it as it is; dispatched or failed: 409. */
    async cancel(workspaceId: string, id: string): Promise<ScheduleRow> {
      return db.transaction().execute(async (tx) => {
        const current = await repo.findForUpdate(tx, workspaceId, id);
        if (!current) throw notFound('schedule');
        if (current.status === 'canceled') return current;
        if (current.status !== 'scheduled') throw invalidState(`The schedule is ${current.status}: only a scheduled one can be canceled.`);
        const now = clock.now();
        return tx.updateTable('schedules').set({ status: 'canceled', canceled_at: now, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
      });
    },

    /**
     * Fires a scheduled schedule now. A refusal (402, 422 do_not_call, ...) is answered like POST
     * /v1/calls/outbound's and leaves the schedule scheduled; anything but `scheduled` is 409.
     */
    async run(workspaceId: string, id: string): Promise<ScheduleRow> {
      const row = await db.transaction().execute(async (tx) => {
        const current = await lockScheduled(tx, workspaceId, id, 'run');
        return dispatcher.fire(tx, current, clock.now());
      });
      deps.nudgeCalls();
      return row;
    },
  };
}

export type SchedulesService = ReturnType<typeof createSchedulesService>;
