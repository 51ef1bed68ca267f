import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/database.ts';
import type { Executor } from '../db/schema.ts';

// Small pieces every leased job shares: who holds a lease, and how a worker's claim and result
// statements run.

/** A lease holder name unique to this process: `host:pid:random`. */
export function leaseHolderName(): string {
  return `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/**
 * Runs one worker statement (a claim, or the recording of a result). On PostgreSQL it runs in a
 * transaction that skips the WAL flush wait: a commit lost in a database crash only means an
 * attempt is made again (leased work is at-least-once anyway), while the rows that create the
 * work are written by their own transaction with full durability. One fsync less per claim and
 * per result is most of the cost at low concurrency. PGlite has no such wait: the statement
 * runs alone.
 */
export async function workerStatement<T>(database: DatabaseHandle, fn: (executor: Executor) => Promise<T>): Promise<T> {
  if (database.kind !== 'postgres') return fn(database.db);
  return database.db.transaction().execute(async (tx) => {
    await sql`set local synchronous_commit = off`.execute(tx);
    return fn(tx);
  });
}
