import fs from 'node:fs/promises';
import path from 'node:path';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { migrations } from './migrations/index.ts';
import { seedPgliteDir } from './pglite-template.ts';
import type { DB } from './schema.ts';

export interface DatabaseOptions {
  /** PostgreSQL connection string; when absent the embedded PGlite in `dataDir` is used. */
  databaseUrl?: string;
  /** Directory of the embedded database (`DATA_DIR/pglite`). */
  pgliteDir?: string;
  /**
   * A migrated PGlite data directory (pglite-template.ts) copied to `pgliteDir` when no database is
   * there yet, instead of creating one.
   */
  pgliteTemplate?: string;
  /** PostgreSQL schema to use (tests give each run its own); created when missing. */
  schema?: string;
  poolSize?: number;
  /**
   * A pooled connection failed while idle (PostgreSQL restarted, the network dropped it). The pool
   * drops that connection and opens another for the next query; this only reports it. Default: a
   * warning on stderr. (Without a listener the pool's 'error' event would end the process.)
   */
  onConnectionError?: (error: Error) => void;
}

export interface DatabaseHandle {
  db: Kysely<DB>;
  kind: 'pglite' | 'postgres';
  /** The raw PGlite instance (LISTEN/NOTIFY on the embedded database). */
  pglite?: PGlite;
  /** The pg pool (LISTEN/NOTIFY across PostgreSQL instances). */
  pool?: pg.Pool;
  /** True when the embedded database was just copied from the template (pgliteTemplate). */
  fromTemplate?: boolean;
  schema?: string;
  close(): Promise<void>;
}

// bigint columns hold micro-USD and counters, all far below 2^53: read them as numbers.
pg.types.setTypeParser(20, (value) => Number(value));

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const schema = options.schema;
    if (schema) {
      const admin = new pg.Client({ connectionString: options.databaseUrl });
      await admin.connect();
      await admin.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replaceAll('"', '')}"`);
      await admin.end();
    }
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      ...(schema ? { options: `-c search_path="${schema}"` } : {}),
    });
    pool.on('error', options.onConnectionError ?? ((error) => console.warn(`database: an idle connection failed (${error.message}); the next query opens another`)));
    // The pool listens for errors on idle connections only. A connection that drops while checked
    // out (a query or transaction in flight when PostgreSQL goes away) fails that query, and also
    // emits 'error' on its client: without a listener of its own, that ended the process. The
    // pool discards such a client when it is released (no longer queryable).
    pool.on('connect', (client) => {
      client.on('error', () => undefined);
    });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', pool, schema, close: () => db.destroy() };
  }
  const dir = options.pgliteDir;
  if (dir) await fs.mkdir(path.dirname(dir), { recursive: true });
  const fromTemplate = dir && options.pgliteTemplate ? seedPgliteDir(dir, options.pgliteTemplate) : false;
  const pglite = await PGlite.create(dir, { parsers: { [pgliteTypes.INT8]: (value: string) => Number(value) } });
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    kind: 'pglite',
    pglite,
    fromTemplate,
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}

export async function migrateToLatest(handle: DatabaseHandle): Promise<void> {
  // Always name the schema: without one, Kysely's migrator takes a migration table found in any
  // other schema of the database for its own (and then fails to read it from the search path).
  const current = await sql<{ schema: string }>`select current_schema() as schema`.execute(handle.db);
  const migrator = new Migrator({
    db: handle.db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: handle.schema ?? current.rows[0]?.schema ?? 'public',
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String((error as Error)?.message ?? error)}`);
  }
}

export async function pingDatabase(db: Kysely<DB>): Promise<void> {
  await sql`select 1`.execute(db);
}
