import assert from 'node:assert/strict';
import { dropSchemaLater } from '../../../test/support/schemas.ts';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { usingPostgres } from '../../../test/support/database.ts';
import { migrateToLatest, openDatabase } from './database.ts';

// A deployment whose DATABASE_URL names no schema migrates the schema its search path points at,
// even when another schema of the same database already holds Kysely's migration tables (CI runs
// the persistence test on `public` while every other test file has a schema of its own).

describe('migrations on a shared PostgreSQL database', { skip: !usingPostgres() && 'needs TEST_DATABASE_URL' }, () => {
  it('migrates the search-path schema although another schema holds migration tables', async () => {
    const url = process.env.TEST_DATABASE_URL as string;
    const suffix = randomBytes(4).toString('hex');
    const [other, target] = [`m_other_${suffix}`, `m_target_${suffix}`];
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA ${other}; CREATE TABLE ${other}.kysely_migration_lock (id text primary key, is_locked integer)`);
      await admin.query(`CREATE TABLE ${other}.kysely_migration (name text primary key, timestamp text)`);
      await admin.query(`CREATE SCHEMA ${target}`);
      const withPath = new URL(url);
      withPath.searchParams.set('options', `-c search_path=${target}`);
      const database = await openDatabase({ databaseUrl: withPath.toString(), poolSize: 2 });
      try {
        await migrateToLatest(database);
      } finally {
        await database.close();
      }
      const tables = await admin.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('kysely_migration', 'users')`,
        [target],
      );
      assert.deepEqual(tables.rows.map((r) => r.table_name).sort(), ['kysely_migration', 'users']);
    } finally {
      await admin.end();
      await dropSchemaLater(url, other);
      await dropSchemaLater(url, target);
    }
  });
});
