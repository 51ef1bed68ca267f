import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../../src/platform/db/database.ts';

/** The PostgreSQL a bench runs on: BENCH_DATABASE_URL, then the `extraEnv` variables, then DATABASE_URL, then the local default. */
export function benchPostgresUrl(extraEnv: string[] = []): string {
  for (const name of ['BENCH_DATABASE_URL', ...extraEnv, 'DATABASE_URL']) {
    const value = process.env[name];
    if (value) return value;
  }
  return 'postgres://postgres@127.0.0.1:5432/test';
}

/**
 * A migrated schema of its own (`bench_<name>_<random>`) on the bench's PostgreSQL, dropped by
 * `drop()`; `skipped` when the server does not answer within 3 s.
 */
export async function openBenchPostgres(
  name: string,
  options: { poolSize?: number; extraEnv?: string[] } = {},
): Promise<{ database: DatabaseHandle; drop: () => Promise<void> } | { skipped: string }> {
  const url = benchPostgresUrl(options.extraEnv);
  const schema = `bench_${name}_${randomBytes(4).toString('hex')}`;
  try {
    const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    await probe.connect();
    await probe.end();
  } catch (error) {
    return { skipped: `PostgreSQL unreachable at ${url.replace(/\/\/[^@]*@/, '//…@')}: ${(error as Error).message}` };
  }
  const database = await openDatabase({ databaseUrl: url, schema, ...(options.poolSize ? { poolSize: options.poolSize } : {}) });
  await migrateToLatest(database);
  return {
    database,
    drop: async () => {
      await database.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}
