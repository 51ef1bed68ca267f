import type { Kysely } from 'kysely';

// Tables of agents; written by the issue that builds them.
export async function up(_db: Kysely<unknown>): Promise<void> {}
