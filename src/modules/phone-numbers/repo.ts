import type { Selectable } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { PhoneNumbersTable } from './tables.ts';

export type PhoneNumberRow = Selectable<PhoneNumbersTable>;

/**
 * The owner of a number (E.164) and the agent it is assigned to: inbound calls find their agent by
 * it. A deleted agent's number keeps its `agent_id` (agents are soft-deleted) but answers none here,
 * so a call to it is refused as to an unassigned number, not rung and then failed.
 */
export async function findAssignedNumber(db: Executor, number: string) {
  return db
    .selectFrom('phone_numbers')
    .leftJoin('agents', (join) => join.onRef('agents.id', '=', 'phone_numbers.agent_id').on('agents.deleted_at', 'is', null))
    .select(['phone_numbers.workspace_id', 'agents.id as agent_id', 'phone_numbers.number'])
    .where('phone_numbers.number', '=', number)
    .executeTakeFirst();
}

export function createPhoneNumbersRepo() {
  return {
    get(db: Executor, workspaceId: string, id: string) {
      return db.selectFrom('phone_numbers').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },
    list(db: Executor, workspaceId: string, page: PageRequest, agentId?: string) {
      let query = db.selectFrom('phone_numbers').selectAll().where('workspace_id', '=', workspaceId);
      if (agentId) query = query.where('agent_id', '=', agentId);
      if (page.after) query = query.where('id', '<', page.after);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },
    async owned(db: Executor, numbers: string[]): Promise<Set<string>> {
      if (numbers.length === 0) return new Set();
      const rows = await db.selectFrom('phone_numbers').select('number').where('number', 'in', numbers).execute();
      return new Set(rows.map((r) => r.number));
    },
    /** Inserts; undefined when the number is already held by a workspace (unique). */
    insert(db: Executor, row: Omit<PhoneNumberRow, "capabilities"> & { capabilities: { voice: boolean; sms: boolean } }) {
      return db
        .insertInto('phone_numbers')
        .values({ ...row, capabilities: JSON.stringify(row.capabilities) })
        .onConflict((oc) => oc.column('number').doNothing())
        .returningAll()
        .executeTakeFirst();
    },
    update(db: Executor, workspaceId: string, id: string, changes: { label?: string | null; agent_id?: string | null }, now: Date) {
      return db.updateTable('phone_numbers').set({ ...changes, updated_at: now }).where('workspace_id', '=', workspaceId).where('id', '=', id).returningAll().executeTakeFirst();
    },
    async remove(db: Executor, workspaceId: string, id: string) {
      const result = await db.deleteFrom('phone_numbers').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },
  };
}
