import type { Executor } from '../../platform/db/schema.ts';

/** The owner of a number (E.164) and the agent it is assigned to: inbound calls find their agent by it. */
export async function findAssignedNumber(db: Executor, number: string) {
  return db.selectFrom('phone_numbers').select(['workspace_id', 'agent_id', 'number']).where('number', '=', number).executeTakeFirst();
}
