import type { Kysely } from 'kysely';

// A live call's length on its own clock, written with each lease renewal: a call whose process
// dies is billed to it (a sandbox call's virtual time is not the wall's, so the wall time between
// the answer and the last renewal would bill it by how loaded the machine was).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('calls').addColumn('live_elapsed_ms', 'integer').execute();
}
