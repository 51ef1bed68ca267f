import type { Executor } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/pagination.ts';

// The do-not-call list of a workspace: E.164 numbers outbound calls refuse (422 do_not_call).

/** True when `number` (E.164) is on the workspace's do-not-call list. */
export async function isDoNotCall(db: Executor, workspaceId: string, number: string): Promise<boolean> {
  const row = await db.selectFrom('dnc_numbers').select('number').where('workspace_id', '=', workspaceId).where('number', '=', number).executeTakeFirst();
  return row !== undefined;
}

export function createDncRepo(db: Executor) {
  return {
    /** Newest first by time added (then number); the cursor is `<iso time>|<number>`. */
    list(workspaceId: string, page: PageRequest) {
      let query = db.selectFrom('dnc_numbers').selectAll().where('workspace_id', '=', workspaceId);
      if (page.after) {
        const [at, number] = page.after.split('|');
        const after = new Date(at);
        query = query.where((eb) => eb.or([eb('created_at', '<', after), eb.and([eb('created_at', '=', after), eb('number', '<', number ?? '')])]));
      }
      return query.orderBy('created_at', 'desc').orderBy('number', 'desc').limit(page.limit + 1).execute();
    },
    /** Adds the number; answers the row and whether it was new. */
    async add(workspaceId: string, number: string, reason: string | null, now: Date) {
      const inserted = await db
        .insertInto('dnc_numbers')
        .values({ workspace_id: workspaceId, number, reason, created_at: now })
        .onConflict((oc) => oc.columns(['workspace_id', 'number']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (inserted) return { row: inserted, created: true };
      const existing = await db.selectFrom('dnc_numbers').selectAll().where('workspace_id', '=', workspaceId).where('number', '=', number).executeTakeFirstOrThrow();
      return { row: existing, created: false };
    },
    async remove(workspaceId: string, number: string): Promise<boolean> {
      const result = await db.deleteFrom('dnc_numbers').where('workspace_id', '=', workspaceId).where('number', '=', number).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },
  };
}
