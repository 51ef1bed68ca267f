// A worker process for crash.test.ts (and nothing else): opens the database named by its
// environment, runs the webhook worker, optionally emits a burst of events, and once nothing is
// pending writes the ids of every stored event to CRASH_OUT. The test kills one such process
// with SIGKILL mid-burst and starts another on the same database.
// PGlite is single-process: the emitter and the worker run here, in the one process that
// opens the data directory.
import fs from 'node:fs';
import pino from 'pino';
import { loadConfig } from '../../config.ts';
import { systemClock } from '../../platform/clock.ts';
import { migrateToLatest, openDatabase } from '../../platform/db/database.ts';
import { createOutboundClient } from '../../platform/outbound/ssrf-guard.ts';
import { createEventEmitter } from '../../platform/outbox/emitter.ts';
import { createWebhookWorker } from './worker.ts';

const env = process.env;
const receiverUrl = env.CRASH_RECEIVER_URL as string;
const workspaceId = env.CRASH_WORKSPACE_ID as string;
const emitCount = Number(env.CRASH_EMIT ?? 0);

const database = await openDatabase(
  env.CRASH_DATABASE_URL ? { databaseUrl: env.CRASH_DATABASE_URL, schema: env.CRASH_SCHEMA, poolSize: 4 } : { pgliteDir: env.CRASH_PGLITE_DIR },
);
await migrateToLatest(database);
const config = loadConfig({ ...env, DATA_DIR: env.CRASH_DATA_DIR ?? '/tmp', ALLOW_PRIVATE_URLS: 'true' });
const events = createEventEmitter({ clock: systemClock, webhooks: config.webhooks, notifyInTransaction: database.kind === 'postgres' });
const outbound = createOutboundClient({ allowPrivate: true });
const worker = createWebhookWorker({
  database,
  clock: systemClock,
  webhooks: config.webhooks,
  outbound,
  logger: pino({ level: 'silent' }),
  wake: events.wake,
  pollIntervalMs: 200,
});
const now = new Date();
await database.db
  .insertInto('workspaces')
  .values({ id: workspaceId, name: 'crash test', created_by: null, created_at: now, updated_at: now })
  .onConflict((oc) => oc.column('id').doNothing())
  .execute();
const agent = { agentId: 'agent_crash', url: receiverUrl, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', events: [] };
// The burst: transactions of 50 events, as fast as they commit. The worker starts once the whole
// burst is committed, so the kill (after the first deliveries) always lands mid-burst, however fast
// the database delivers.
const BATCH = 50;
for (let i = 0; i < emitCount; i += BATCH) {
  await database.db.transaction().execute(async (tx) => {
    for (let j = i; j < Math.min(i + BATCH, emitCount); j++) {
      await events.emit(tx, { workspaceId, type: 'call.started', agent, data: { i: j } });
    }
  });
}
if (emitCount > 0 && env.CRASH_EMITTED) fs.writeFileSync(env.CRASH_EMITTED, String(emitCount));
await worker.start();

// Wait until nothing is pending (bounded), then report what the database holds.
const deadline = Date.now() + 90_000;
for (;;) {
  const pending = await database.db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  if (Number(pending.n) === 0 || Date.now() > deadline) break;
  await new Promise((r) => setTimeout(r, 200));
}
await worker.stop();
const rows = await database.db.selectFrom('webhook_deliveries').select(['event_id', 'status', 'attempt_count']).where('workspace_id', '=', workspaceId).execute();
const errors = await database.db
  .selectFrom('webhook_attempts')
  .select(['error', (eb) => eb.fn.countAll<number>().as('n')])
  .where('workspace_id', '=', workspaceId)
  .where('error', 'is not', null)
  .groupBy('error')
  .execute();
fs.writeFileSync(env.CRASH_OUT as string, JSON.stringify({ rows, errors }));
await outbound.close();
await database.close();
process.exit(0);
