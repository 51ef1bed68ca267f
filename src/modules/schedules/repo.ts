import { type Selectable, sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { SchedulesTable, ScheduleStatus } from './tables.ts';

// Queries of schedules. Every read of one schedule takes the workspace: another workspace's row
// is simply not found.

export type ScheduleRow = Selectable<SchedulesTable>;

export function createSchedulesRepo() {
  return {
    find(db: Executor, workspaceId: string, id: string): Promise<ScheduleRow | undefined> {
      return db.selectFrom('schedules').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },
    /** The row locked for this transaction (waits for a worker firing it, then reads its new state). */
    findForUpdate(tx: Executor, workspaceId: string, id: string): Promise<ScheduleRow | undefined> {
      return tx.selectFrom('schedules').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).forUpdate().executeTakeFirst();
    },
    list(db: Executor, workspaceId: string, page: PageRequest, filters: { status?: ScheduleStatus; agent_id?: string }) {
      let query = db.selectFrom('schedules').selectAll().where('workspace_id', '=', workspaceId);
      if (filters.status) query = query.where('status', '=', filters.status);
      if (filters.agent_id) query = query.where('agent_id', '=', filters.agent_id);
      if (page.after) query = query.where('id', '<', page.after);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },
    /**
     * Due schedules, earliest first, locked for the caller's transaction in one statement; rows
     * another worker holds are skipped (it is firing them).
     */
    async lockDue(tx: Executor, now: Date, limit: number): Promise<ScheduleRow[]> {
      const rows = await sql<ScheduleRow>`
        select * from schedules
        where status = 'scheduled' and scheduled_at <= ${now}
        order by scheduled_at, id
        limit ${limit}
        for update skip locked`.execute(tx);
      return rows.rows;
    },
    /** When the earliest schedule still waiting is due (null: none). */
    async nextDue(db: Executor): Promise<Date | null> {
      const row = await db.selectFrom('schedules').select((eb) => eb.fn.min('scheduled_at').as('next')).where('status', '=', 'scheduled').executeTakeFirst();
      return row?.next ? new Date(row.next as Date | string) : null;
    },
  };
}

export type SchedulesRepo = ReturnType<typeof createSchedulesRepo>;
