import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../../src/platform/db/database.ts';
import { closeAtEnd } from './cleanup.ts';
import { dropSchemaLater } from './schemas.ts';

// One database per test file (process): a copy of the migrated PGlite template that
// scripts/run-tests.mjs prepared once, or — with TEST_DATABASE_URL — a schema of its own on
// PostgreSQL, dropped when the run ends (test/support/schemas.ts). Tests isolate themselves by creating their own
// users and workspaces, never by sharing rows.

let handle: Promise<DatabaseHandle> | undefined;

export const usingPostgres = () => Boolean(process.env.TEST_DATABASE_URL);

async function open(): Promise<DatabaseHandle> {
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const schema = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
    const database = await openDatabase({ databaseUrl: url, schema, poolSize: 5 });
    await migrateToLatest(database);
    closeAtEnd(async () => {
      await database.close();
      await dropSchemaLater(url, schema);
    });
    return database;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-pglite-'));
  const template = process.env.TEST_PGLITE_TEMPLATE;
  if (template && fs.existsSync(template)) fs.cpSync(template, dir, { recursive: true });
  const database = await openDatabase({ pgliteDir: dir });
  await migrateToLatest(database);
  closeAtEnd(async () => {
    await database.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return database;
}

/** The database of this test file, opened (and migrated) on first use. */
export function testDatabase(): Promise<DatabaseHandle> {
  handle ??= open();
  return handle;
}

/**
 * Another instance's handle on this file's database: on PostgreSQL a pool (and LISTEN
 * connection) of its own, so what reaches it goes through the database; on PGlite the same
 * handle, as two apps in one process would share it.
 */
export async function otherHandle(): Promise<DatabaseHandle> {
  const first = await testDatabase();
  const url = process.env.TEST_DATABASE_URL;
  if (first.kind !== 'postgres' || !url) return first;
  const second = await openDatabase({ databaseUrl: url, schema: first.schema, poolSize: 3 });
  closeAtEnd(() => second.close());
  return second;
}
