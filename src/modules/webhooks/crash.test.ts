import assert from 'node:assert/strict';
import { dropSchemaLater } from '../../../test/support/schemas.ts';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { migrateToLatest, openDatabase } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { startReceiver } from './test-receiver.ts';

// Nothing is lost when a worker dies: a process emitting a burst of 1,000 events while its
// worker delivers them is killed with SIGKILL mid-burst; a second process on the same database
// finishes the job. Every committed event reaches the receiver; duplicates (attempts in flight
// at the kill) are allowed by at-least-once delivery, counted and reported.
// On PGlite the child owns the data directory (single-process); with TEST_DATABASE_URL the
// children share a PostgreSQL schema of their own.

const BURST = 1000;
const KILL_AFTER = 150;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-crash-'));
const databaseUrl = process.env.TEST_DATABASE_URL;
const schema = `crash_${process.pid}_${randomBytes(3).toString('hex')}`;
const children: ChildProcess[] = [];

after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
  if (databaseUrl) await dropSchemaLater(databaseUrl, schema);
});

async function prepareDatabase(): Promise<Record<string, string>> {
  if (databaseUrl) {
    const database = await openDatabase({ databaseUrl, schema, poolSize: 1 });
    await migrateToLatest(database);
    await database.close();
    return { CRASH_DATABASE_URL: databaseUrl, CRASH_SCHEMA: schema };
  }
  const dir = path.join(work, 'pglite');
  const template = process.env.TEST_PGLITE_TEMPLATE;
  if (template && fs.existsSync(template)) fs.cpSync(template, dir, { recursive: true });
  return { CRASH_PGLITE_DIR: dir };
}

function runChild(env: Record<string, string>): { child: ChildProcess; exited: Promise<number | string | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'crash-child.ts')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.push(child);
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  return { child, exited };
}

// The time limits are generous: on a loaded machine (load 15, two suites side by side) the two
// children took over 100 s; a slow run is not a lost event.
it(`loses no event when a worker is killed with SIGKILL in the middle of a burst of ${BURST}`, { timeout: 240_000 }, async (t) => {
  const receiver = await startReceiver(() => 200);
  after(() => receiver.close());
  const dbEnv = await prepareDatabase();
  const out = path.join(work, 'rows.json');
  const common = {
    ...dbEnv,
    CRASH_RECEIVER_URL: receiver.url,
    CRASH_WORKSPACE_ID: newId('ws'),
    CRASH_OUT: out,
    CRASH_DATA_DIR: work,
    WEBHOOK_TIMEOUT_MS: '1500',
    WEBHOOK_RETRY_SCHEDULE: '0,1s,2s,4s',
    WEBHOOK_CONCURRENCY: '16',
  };

  const emitted = path.join(work, 'emitted');
  const first = runChild({ ...common, CRASH_EMIT: String(BURST), CRASH_EMITTED: emitted });
  const allCommitted = (async () => {
    for (let i = 0; i < 6000 && !fs.existsSync(emitted); i++) await new Promise((r) => setTimeout(r, 20));
    if (!fs.existsSync(emitted)) throw new Error('the burst was not committed within 120 s');
  })();
  // Kill once the whole burst is committed and deliveries are under way (the child starts its
  // worker after the last commit), not after they end.
  await Promise.race([
    Promise.all([allCommitted, receiver.waitFor(KILL_AFTER, 120_000)]),
    first.exited.then((code) => {
      throw new Error(`the first worker exited early (${code})`);
    }),
  ]);
  first.child.kill('SIGKILL');
  assert.equal(await first.exited, 'SIGKILL');
  const atKill = receiver.received.length;

  const second = runChild({ ...common, CRASH_EMIT: '0' });
  assert.equal(await second.exited, 0, 'the second worker finished');
  const { rows, errors } = JSON.parse(fs.readFileSync(out, 'utf8')) as {
    rows: Array<{ event_id: string; status: string; attempt_count: number }>;
    errors: Array<{ error: string; n: number }>;
  };

  const stored = new Set(rows.map((r) => r.event_id));
  const counts = new Map<string, number>();
  for (const r of receiver.received) {
    const id = String(r.headers['webhook-id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const missing = [...stored].filter((id) => !counts.has(id));
  const phantom = [...counts.keys()].filter((id) => !stored.has(id));
  const duplicates = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
  t.diagnostic(
    `committed events: ${stored.size} of ${BURST}; received at the kill: ${atKill}; received in all: ${receiver.received.length}; ` +
      `duplicates (at-least-once): ${duplicates}; deliveries retried: ${rows.filter((r) => r.attempt_count > 1).length}; ` +
      `recorded attempt errors: ${JSON.stringify(errors)}`,
  );
  assert.equal(stored.size, BURST, 'the whole burst was committed before the kill');
  assert.ok(atKill < BURST, `the kill came in the middle of the deliveries (${atKill} of ${BURST} received)`);
  assert.deepEqual(missing, [], 'every committed event was delivered');
  assert.deepEqual(phantom, [], 'nothing was delivered that the database does not hold');
  assert.ok(rows.every((r) => r.status === 'succeeded'), 'every delivery ends succeeded');
  // Duplicates come from attempts in flight at the kill and from timeouts on a loaded machine;
  // far fewer than one per event, or something sends twice.
  assert.ok(duplicates < stored.size / 2, `duplicates: ${duplicates} for ${stored.size} events`);
});
