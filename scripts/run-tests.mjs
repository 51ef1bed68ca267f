#!/usr/bin/env node
// `npm test`: prepares one migrated PGlite template, runs every *.test.ts file with node:test
// (each file in its own process, on its own copy of the template, or its own PostgreSQL schema
// when TEST_DATABASE_URL is set), then runs the checks over what the suite recorded: OpenAPI
// coverage and response leaks, and secrets in the log lines. Extra arguments are test files to
// run instead of the whole suite (the checks are then skipped). `--slow` runs test/slow/ instead:
// multi-process tests that need PostgreSQL and Redis (`npm run test:slow`, also run by .ci/run).
// A TEST_PGLITE_TEMPLATE already in the environment that exists is used as it is, not prepared
// again nor deleted (`npm run mutate` runs the same files once per mutant: preparing the template
// is most of a short run).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sameOnBothDatabases } from './same-on-both-databases.mjs';

const root = path.resolve(import.meta.dirname, '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-test-'));
const given = process.env.TEST_PGLITE_TEMPLATE;
const reuseTemplate = given !== undefined && fs.existsSync(given);
const template = reuseTemplate ? given : path.join(work, 'pglite-template');
const coverageDir = path.join(work, 'operations');
const fileTimes = path.join(work, 'file-times.tsv');
fs.mkdirSync(coverageDir);

function testFiles(dir) {
  return fs
    .readdirSync(path.join(root, dir), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => path.join(dir, f))
    .sort();
}

const slow = process.argv[2] === '--slow';
const selected = slow ? testFiles('test/slow') : process.argv.slice(2);
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const everyFile = [...testFiles('src'), ...testFiles('test').filter((f) => !f.startsWith(path.join('test', 'slow')))];
// The dashboard's browser files run on PGlite only (TEST_BROWSER_ON_POSTGRES=1 runs them on
// PostgreSQL too): a page calls the same API routes whose every rule runs on both databases, and
// the eight files are a quarter of a run's summed wall time (docs/testing.md, "Two databases").
const browserOnce = onPostgres && process.env.TEST_BROWSER_ON_POSTGRES !== '1';
const isBrowserFile = (f) => f.startsWith(path.join('test', 'dashboard')) && f.endsWith('.browser.test.ts');
// A file that never reads TEST_DATABASE_URL runs the same test on both databases: PGlite only
// (scripts/same-on-both-databases.mjs; TEST_EVERY_FILE_ON_POSTGRES=1 runs them on PostgreSQL too).
const repeatsOnPostgres = (f) => onPostgres && process.env.TEST_EVERY_FILE_ON_POSTGRES !== '1' && sameOnBothDatabases(root, f);
const onceOnly = everyFile.filter((f) => (browserOnce && isBrowserFile(f)) || repeatsOnPostgres(f));
const files = selected.length > 0 ? selected : everyFile.filter((f) => !onceOnly.includes(f));
const env = {
  ...process.env,
  TEST_PGLITE_TEMPLATE: template,
  TEST_COVERAGE_DIR: coverageDir,
  TEST_FILE_TIMES: fileTimes,
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --no-warnings=ExperimentalWarning --import ${path.join(root, 'scripts', 'file-clock.mjs')}`.trim(),
};

const leftOut = selected.length > 0 ? 0 : onceOnly.length;
const browserLeftOut = onceOnly.filter(isBrowserFile).length;
const leftOutSaying = `the ${browserLeftOut} dashboard browser files and ${leftOut - browserLeftOut} files that never read TEST_DATABASE_URL run on PGlite only`;
console.log(`database: ${onPostgres ? 'PostgreSQL (TEST_DATABASE_URL)' : 'PGlite'}; ${files.length} test files${leftOut > 0 ? ` (${leftOutSaying})` : ''}`);
if (!reuseTemplate) {
  const prepared = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/prepare-template.ts', template], { cwd: root, env, stdio: 'inherit' });
  if (prepared.status !== 0) process.exit(prepared.status ?? 1);
}

// Three files at once on two cores: many files spend most of their time waiting on real time
// (calls paced by the clock, a browser, a child process starting), so a third keeps the cores busy;
// the suite is written to pass on a loaded machine (docs/testing.md).
const concurrency = process.env.TEST_CONCURRENCY ?? '3';
const run = (args) => spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...args], { cwd: root, env, stdio: 'inherit' });

const suite = run(files);
let status = suite.status ?? 1;
if (selected.length === 0) {
  const coverage = run(['test/openapi-coverage.check.ts', 'test/log-secrets.check.ts']);
  if (coverage.status !== 0) status = coverage.status ?? 1;
}
printSlowestFiles();
await dropRecordedSchemas();
fs.rmSync(work, { recursive: true, force: true });
process.exit(status);

/** The files that took the most wall time, and the sums (scripts/file-clock.mjs wrote them). */
function printSlowestFiles() {
  if (!fs.existsSync(fileTimes)) return;
  const rows = fs
    .readFileSync(fileTimes, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split('\t'))
    .map(([wall, cpu, file]) => ({ wall: Number(wall), cpu: Number(cpu), file: path.relative(root, file) }))
    .sort((a, b) => b.wall - a.wall);
  const seconds = (ms) => `${(ms / 1000).toFixed(0)} s`;
  const sum = (key) => rows.reduce((total, row) => total + row[key], 0);
  console.log(`\n${rows.length} files: ${seconds(sum('wall'))} of wall time summed, ${seconds(sum('cpu'))} of their own CPU; the slowest (wall, CPU):`);
  for (const row of rows.slice(0, 15)) console.log(`  ${seconds(row.wall).padStart(6)} ${seconds(row.cpu).padStart(6)}  ${row.file}`);
}

/**
 * The PostgreSQL schemas the test files used, dropped once every file has ended (a schema dropped
 * while another file migrates breaks that file's migration: see test/support/schemas.ts).
 */
async function dropRecordedSchemas() {
  const dir = path.join(coverageDir, 'schemas-to-drop');
  if (!process.env.TEST_DATABASE_URL || !fs.existsSync(dir)) return;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    for (const schema of fs.readdirSync(dir)) await client.query(`DROP SCHEMA IF EXISTS "${schema.replaceAll('"', '')}" CASCADE`);
  } finally {
    await client.end();
  }
}
