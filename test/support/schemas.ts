import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

// PostgreSQL schemas of test files are dropped when the whole run has ended, not when each file
// ends: Kysely's migrator looks for its tables by introspecting every schema of the database
// (pg_get_serial_sequence on each table), and a schema another file drops meanwhile makes that
// query fail ("relation t_….phone_numbers does not exist"). scripts/run-tests.mjs drops the
// recorded schemas after the suite; a file run on its own (no TEST_COVERAGE_DIR) drops its own.

const RECORD_DIR = 'schemas-to-drop';

/** Drops `schema` at the end of the run (or now, outside scripts/run-tests.mjs). */
export async function dropSchemaLater(databaseUrl: string, schema: string): Promise<void> {
  const dir = process.env.TEST_COVERAGE_DIR;
  if (dir) {
    fs.mkdirSync(path.join(dir, RECORD_DIR), { recursive: true });
    fs.writeFileSync(path.join(dir, RECORD_DIR, schema), '');
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema.replaceAll('"', '')}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Creates `schema` for a multi-process test; answers a client whose queries run in it. */
export async function createSchema(databaseUrl: string, schema: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`CREATE SCHEMA "${schema}"`);
  await client.query(`SET search_path TO "${schema}"`);
  return client;
}

/** `databaseUrl` whose connections run in `schema` (the DATABASE_URL of a server process). */
export function urlInSchema(databaseUrl: string | URL, schema: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}
