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
// only through its module's service (no query, no import of a repo).

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

const isRouteFile = (file: string) => /(^|\/)(routes|public-routes)\.ts$|\/routes\/[^/]+\.ts$/.test(file);
/** A Kysely query, or an import of a repo module (`./repo.ts`, `../x/repo.ts`, `../repo.ts`), type-only imports included. */
const QUERY = /\.(selectFrom|insertInto|updateTable|deleteFrom|mergeInto)\(/;
const REPO_IMPORT = /^import\b[^;]*?\bfrom\s+'(\.{1,2}\/)+([\w-]+\/)*repo\.ts'/m;

/** Route files that reach the data themselves instead of through their module's service, as `file: why`. */
export function routesReachingData(base: string): { routeFiles: number; found: string[] } {
  const routeFiles = sourceFiles(path.join(base, 'src/modules')).filter(isRouteFile);
  const found: string[] = [];
  for (const file of routeFiles) {
    const text = fs.readFileSync(file, 'utf8');
    if (QUERY.test(text)) found.push(`${path.relative(base, file)}: runs a query`);
    if (REPO_IMPORT.test(text)) found.push(`${path.relative(base, file)}: imports a repo`);
  }
  return { routeFiles: routeFiles.length, found: found.sort() };
}

describe('table ownership', () => {
  it('no module writes a table another module owns (but the accepted writes and the known ones, each to go)', () => {
    assert.deepEqual(crossWrites(root), [...ACCEPTED, ...KNOWN].sort());
  });

  it("no route file runs a query or imports a repo: its handlers call the module's service", () => {
    const { routeFiles, found } = routesReachingData(root);
    assert.ok(routeFiles > 20, `${routeFiles} route files found`);
    assert.deepEqual(found, []);
  });

  it('finds a planted query and planted repo imports in route files, and only those', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-routes-'));
    try {
      const files: Record<string, string> = {
        'src/modules/alpha/routes.ts': "import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';\nimport { createAlphaRepo } from './repo.ts';\n",
        'src/modules/alpha/routes/read.ts': "import { type Row } from '../repo.ts';\nexport const r = (db) => db.selectFrom('alpha_things');\n",
        'src/modules/beta/public-routes.ts': "import type {\n  AlphaRepo,\n} from '../alpha/repo.ts';\n",
        'src/modules/beta/routes.ts': "import type { BetaService } from './service.ts';\nimport { present } from './present.ts';\n// the repo.ts of alpha is not ours\n",
        'src/modules/beta/service.ts': "import { createBetaRepo } from './repo.ts';\nexport const s = (db) => db.selectFrom('beta_things');\n",
        'src/modules/beta/reports.ts': "import { createBetaRepo } from './repo.ts';\n",
      };
      for (const [file, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      }
      assert.deepEqual(routesReachingData(dir), {
        routeFiles: 4,
        found: [
          'src/modules/alpha/routes.ts: imports a repo',
          'src/modules/alpha/routes/read.ts: imports a repo',
          'src/modules/alpha/routes/read.ts: runs a query',
          'src/modules/beta/public-routes.ts: imports a repo',
        ],
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds a planted write, and only that one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-tables-'));
    try {
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
      for (const [file, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      }
      assert.deepEqual(crossWrites(dir), [
        'src/modules/beta/raw-sql.ts: update alpha_things (owned by alpha)',
        'src/modules/beta/raw.ts: insertInto nowhere (owned by nobody (an undeclared table))',
        'src/modules/beta/service.ts: updateTable alpha_things (owned by alpha)',
        'src/platform/audit.ts: insertInto users (owned by auth)',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
