import type { Executor } from '../../platform/db/schema.ts';

/** True when `number` (E.164) is on the workspace's do-not-call list. */
export async function isDoNotCall(db: Executor, workspaceId: string, number: string): Promise<boolean> {
  const row = await db.selectFrom('dnc_numbers').select('number').where('workspace_id', '=', workspaceId).where('number', '=', number).executeTakeFirst();
  return row !== undefined;
}
