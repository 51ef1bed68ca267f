import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';

// Each table is written by the module that owns it (issue 30, part 3): a module changes another's
// rows through that module's repo or service, never with its own INSERT, UPDATE or DELETE. A
// module owns the tables its `tables.ts` declares; the foundation's tables (declared together in
// platform/db/foundation-tables.ts) are owned as FOUNDATION says. The check reads Kysely's
// `insertInto` / `updateTable` / `deleteFrom` / `mergeInto` calls on a table named in the source
// of every module and of the platform, and raw SQL's `insert into` / `update` / `delete from` of a
// known table; tests and their helpers may write anything. Beside it: a route file reaches the data
// only through its module's service (no query, no import of a repo, a `*-sql.ts` or any other file
// of a module that queries), and no module but calls reads the calls table, but the listed reads.

const root = path.resolve(import.meta.dirname, '..');

const FOUNDATION: Record<string, string> = {
  users: 'auth',
  sessions: 'auth',
  refresh_tokens: 'auth',
  email_tokens: 'auth',
  workspaces: 'workspaces',
  memberships: 'workspaces',
  invitations: 'invitations',
  api_keys: 'api-keys',
  wallets: 'wallet',
  wallet_transactions: 'wallet',
  audit_log: 'platform',
  idempotency_keys: 'platform',
};

/**
 * Writes the design accepts (docs/ARCHITECTURE.md): the request gate, in the platform, stamps the
 * use of the key or session it admitted; the platform's event outbox queues an event and its
 * deliveries in the emitter's transaction, which the webhooks module then delivers.
 */
const ACCEPTED = [
  'src/platform/auth/api-key-usage.ts: updateTable api_keys (owned by api-keys)',
  'src/platform/auth/api-key-usage.ts: updateTable sessions (owned by auth)',
  'src/platform/outbox/emitter.ts: insertInto webhook_deliveries (owned by webhooks)',
  'src/platform/outbox/emitter.ts: insertInto webhook_events (owned by webhooks)',
];

/** Writes known when the rule came, each to go (issue 30): none left. */
const KNOWN: string[] = [];

const isTestCode = (file: string) => /(\.test\.ts|test-helpers\.ts|testing\.ts|crash-child\.ts)$/.test(file);

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts') && !isTestCode(f))
    .map((f) => path.join(dir, f));
}

/** Table → owner: each module's `interface …Tables { name: … }`, the platform's own, and the foundation's. */
export function tableOwners(base: string): Map<string, string> {
  const owners = new Map(Object.entries(FOUNDATION));
  const declared = (file: string, owner: string) => {
    const text = fs.readFileSync(file, 'utf8');
    for (const block of text.matchAll(/export interface \w+Tables \{([^}]*)\}/g)) {
      for (const [, table] of block[1].matchAll(/^\s*([a-z_]+):/gm)) owners.set(table, owner);
    }
  };
  const modules = path.join(base, 'src/modules');
  for (const name of fs.existsSync(modules) ? fs.readdirSync(modules) : []) {
    const file = path.join(modules, name, 'tables.ts');
    if (fs.existsSync(file)) declared(file, name);
  }
  for (const file of sourceFiles(path.join(base, 'src/platform'))) {
    if (file.endsWith('tables.ts') && !file.endsWith('foundation-tables.ts')) declared(file, 'platform');
  }
  return owners;
}

/** Every write by a module (or the platform) to a table it does not own, as `file: verb table (owned by …)`. */
export function crossWrites(base: string): string[] {
  const owners = tableOwners(base);
  const found: string[] = [];
  const scan = (file: string, writer: string) => {
    const text = fs.readFileSync(file, 'utf8');
    for (const [, verb, table] of text.matchAll(/\b(insertInto|updateTable|deleteFrom|mergeInto)\(\s*'([a-z_]+)'/g)) {
      const owner = owners.get(table) ?? 'nobody (an undeclared table)';
      if (owner !== writer) found.push(`${path.relative(base, file)}: ${verb} ${table} (owned by ${owner})`);
    }
    // Raw SQL (sql`update calls …`): only names of known tables count (`for update of c` is no write).
    for (const [, verb, table] of text.matchAll(/\b(insert into|update|delete from)\s+([a-z_]+)\b/gi)) {
      const owner = owners.get(table);
      if (owner !== undefined && owner !== writer) found.push(`${path.relative(base, file)}: ${verb.toLowerCase()} ${table} (owned by ${owner})`);
    }
  };
  const modules = path.join(base, 'src/modules');
  for (const name of fs.existsSync(modules) ? fs.readdirSync(modules) : []) {
    for (const file of sourceFiles(path.join(modules, name))) scan(file, name);
  }
  for (const file of sourceFiles(path.join(base, 'src/platform'))) scan(file, 'platform');
  return [...new Set(found)].sort();
}

/**
 * Reads of `calls` by other modules, each with why it stays. The calls module owns the table and
 * offers its reads (calls/figures.ts: analytics, usage, voice sessions' figures; calls/reads.ts:
 * the rows a voice session, a carrier's webhook, a campaign or a number needs), handed to the
 * others by the composition root; these few join calls inside another module's one statement.
 */
const CALL_READS_ALLOWED: Record<string, string> = {
  // pickDueContacts counts the campaign's unended calls in the statement that picks and locks that
  // many due contacts, in the dialer's transaction under the campaign's row lock: the concurrency
  // rule is one statement there (the count cannot come from another module's query in between).
  'src/modules/campaigns/dialer-sql.ts': 'reads calls',
  // The results CSV streams up to 100,000 contacts page by page, each left-joined to its call's
  // outcome and extracted fields in the same query (and the stats group the campaign's calls).
  'src/modules/campaigns/results.ts': 'reads calls',
  // endExpired: a page of expired sessions joined to their still-queued calls in one statement;
  // split, live sessions past their token's expiry would fill the page and starve the rest.
  'src/modules/voice/service.ts': 'reads calls',
};

/** Kysely's selectFrom / joins of `calls`, and raw SQL's `from calls` / `join calls` (comments left out). */
const CALLS_READ = /\b(selectFrom|innerJoin|leftJoin|rightJoin|fullJoin)\(\s*'calls(\s+as\s+\w+)?'|\b(from|join)\s+calls\b/i;
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

/** Every module file but the calls module's that reads the `calls` table, as `file: reads calls`. */
export function foreignCallReads(base: string): Record<string, string> {
  const found: Record<string, string> = {};
  const modules = path.join(base, 'src/modules');
  for (const name of fs.existsSync(modules) ? fs.readdirSync(modules) : []) {
    if (name === 'calls') continue;
    for (const file of sourceFiles(path.join(modules, name))) {
      if (CALLS_READ.test(withoutComments(fs.readFileSync(file, 'utf8')))) found[path.relative(base, file)] = 'reads calls';
    }
  }
  return found;
}

const isRouteFile = (file: string) => /(^|\/)(routes|public-routes)\.ts$|\/routes\/[^/]+\.ts$/.test(file);
/** A Kysely query or raw SQL (sql`…`, sql<T>`…`). */
const RUNS_SQL = /\.(selectFrom|insertInto|updateTable|deleteFrom|mergeInto)\(|\bsql(<[^`>]*>)?`/;
/** Relative imports, type-only ones included (`import type { X } from '../repo.ts'`, over several lines too). */
const RELATIVE_IMPORTS = /^import\b[^;]*?\bfrom\s+'(\.{1,2}\/[^']+)'/gm;

/**
 * A module file at the SQL level: a `repo.ts`, a `*-sql.ts` (the statements of a job or of the
 * dialer), or any other module file that runs a query, but the service, which routes call.
 */
function isSqlFile(file: string): boolean {
  const name = path.basename(file);
  if (name === 'repo.ts' || name.endsWith('-sql.ts')) return true;
  if (name === 'service.ts' || !fs.existsSync(file)) return false;
  return RUNS_SQL.test(fs.readFileSync(file, 'utf8'));
}

/** Route files that reach the data themselves instead of through their module's service, as `file: why`. */
export function routesReachingData(base: string): { routeFiles: number; found: string[] } {
  const modules = path.join(base, 'src/modules');
  const routeFiles = sourceFiles(modules).filter(isRouteFile);
  const found: string[] = [];
  for (const file of routeFiles) {
    const text = fs.readFileSync(file, 'utf8');
    if (RUNS_SQL.test(text)) found.push(`${path.relative(base, file)}: runs a query`);
    for (const [, specifier] of text.matchAll(RELATIVE_IMPORTS)) {
      const target = path.resolve(path.dirname(file), specifier);
      if (target.startsWith(modules + path.sep) && isSqlFile(target)) found.push(`${path.relative(base, file)}: imports ${path.relative(base, target)}`);
    }
  }
  return { routeFiles: routeFiles.length, found: found.sort() };
}


/** Runs `check` on a temporary tree holding `files` (path → text), removed afterwards. */
function withPlantedTree(files: Record<string, string>, check: (dir: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-planted-'));
  try {
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
    }
    check(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('table ownership', () => {
  it('no module writes a table another module owns (but the accepted writes and the known ones, each to go)', () => {
    assert.deepEqual(crossWrites(root), [...ACCEPTED, ...KNOWN].sort());
  });

  it("no route file runs a query or imports a module's SQL (repo, *-sql.ts, a file that queries): its handlers call the module's service", () => {
    const { routeFiles, found } = routesReachingData(root);
    assert.ok(routeFiles > 20, `${routeFiles} route files found`);
    assert.deepEqual(found, []);
  });

  it('finds a planted query and planted imports of SQL files in route files, and only those', () => {
    const files: Record<string, string> = {
      'src/modules/alpha/routes.ts': "import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';\nimport { createAlphaRepo } from './repo.ts';\n",
      'src/modules/alpha/routes/read.ts': "import { type Row } from '../repo.ts';\nexport const r = (db) => db.selectFrom('alpha_things');\n",
      'src/modules/alpha/routes/control.ts': "import type { AlphaService } from '../service.ts';\nimport type { AlphaRow } from '../dialer-sql.ts';\nimport type { AlphaThing } from '../tables.ts';\n",
      'src/modules/alpha/routes/raw.ts': "import { sql } from 'kysely';\nexport const q = (db) => sql<{ n: number }>`select 1 as n`.execute(db);\n",
      'src/modules/alpha/service.ts': "export const s = (db) => db.selectFrom('alpha_things');\n",
      'src/modules/beta/public-routes.ts': "import type {\n  AlphaRepo,\n} from '../alpha/repo.ts';\nimport { totals } from './figures.ts';\nimport { present } from '../alpha/service.ts';\n",
      'src/modules/beta/routes.ts': "import type { BetaService } from './service.ts';\nimport { present } from './present.ts';\n// the repo.ts of alpha is not ours\n",
      'src/modules/beta/present.ts': "export const present = (row) => ({ id: row.id });\n",
      'src/modules/beta/figures.ts': "export const totals = (db) => db.selectFrom('beta_things').select('id');\n",
      'src/modules/beta/service.ts': "import { createBetaRepo } from './repo.ts';\nexport const s = (db) => db.selectFrom('beta_things');\n",
      'src/modules/beta/reports.ts': "import { createBetaRepo } from './repo.ts';\n",
    };
    withPlantedTree(files, (dir) => {
      assert.deepEqual(routesReachingData(dir), {
        routeFiles: 6,
        found: [
          'src/modules/alpha/routes.ts: imports src/modules/alpha/repo.ts',
          'src/modules/alpha/routes/control.ts: imports src/modules/alpha/dialer-sql.ts',
          'src/modules/alpha/routes/raw.ts: runs a query',
          'src/modules/alpha/routes/read.ts: imports src/modules/alpha/repo.ts',
          'src/modules/alpha/routes/read.ts: runs a query',
          'src/modules/beta/public-routes.ts: imports src/modules/alpha/repo.ts',
          'src/modules/beta/public-routes.ts: imports src/modules/beta/figures.ts',
        ],
      });
    });
  });

  it('no module but calls reads the calls table (but the listed reads, each with its reason)', () => {
    assert.deepEqual(foreignCallReads(root), CALL_READS_ALLOWED);
  });

  it('finds planted reads of calls outside the calls module, and only those', () => {
    const files: Record<string, string> = {
      'src/modules/calls/figures.ts': "export const f = (db) => db.selectFrom('calls').selectAll();\n",
      'src/modules/alpha/repo.ts': "export const a = (db) => db.selectFrom( 'calls').select('id');\n",
      'src/modules/beta/service.ts': "export const b = (db) => db.selectFrom('beta_things').innerJoin('calls', 'calls.id', 'beta_things.call_id');\n",
      'src/modules/gamma/stats.ts': "export const g = sql`select count(*) from campaign_contacts k left join calls c on c.id = k.call_id`;\n",
      'src/modules/delta/repo.ts': "// the figures come from calls through the calls module\n/* not from calls here */\nexport const d = (db) => db.selectFrom('calls_archive').selectAll();\n",
      'src/modules/delta/delta.test.ts': "export const t = (db) => db.selectFrom('calls');\n",
    };
    withPlantedTree(files, (dir) => {
      assert.deepEqual(foreignCallReads(dir), {
        'src/modules/alpha/repo.ts': 'reads calls',
        'src/modules/beta/service.ts': 'reads calls',
        'src/modules/gamma/stats.ts': 'reads calls',
      });
    });
  });

  it('finds a planted write, and only that one', () => {
    const files: Record<string, string> = {
      'src/modules/alpha/tables.ts': 'export interface AlphaTables {\n  alpha_things: { id: string };\n}\n',
      'src/modules/alpha/repo.ts': "export const a = (db) => db.insertInto('alpha_things').values({ id: 'x' });\n",
      'src/modules/beta/tables.ts': 'export interface BetaTables {\n  beta_things: { id: string };\n}\n',
      'src/modules/beta/service.ts': "export const b = (db) => [db.updateTable('alpha_things').set({}), db.deleteFrom( 'beta_things')];\n",
      'src/modules/beta/beta.test.ts': "export const t = (db) => db.deleteFrom('alpha_things');\n",
      'src/modules/beta/raw.ts': "export const r = (db) => db.insertInto('nowhere');\n",
      'src/modules/beta/raw-sql.ts': "export const q = sql`UPDATE alpha_things SET id = 'y' FOR UPDATE OF beta_things SKIP LOCKED`;\n",
      'src/platform/audit.ts': "export const p = (db) => [db.insertInto('audit_log'), db.insertInto('users')];\n",
    };
    withPlantedTree(files, (dir) => {
      assert.deepEqual(crossWrites(dir), [
        'src/modules/beta/raw-sql.ts: update alpha_things (owned by alpha)',
        'src/modules/beta/raw.ts: insertInto nowhere (owned by nobody (an undeclared table))',
        'src/modules/beta/service.ts: updateTable alpha_things (owned by alpha)',
        'src/platform/audit.ts: insertInto users (owned by auth)',
      ]);
    });
  });
});
