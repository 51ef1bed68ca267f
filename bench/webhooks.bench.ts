// Webhook delivery benchmark: deliveries per second from the events engine (claim with SKIP
// LOCKED → signed HTTP POST through the SSRF-guarded client → fenced result transaction) to a
// local receiver on 127.0.0.1, at worker concurrency 1, 16 and 64, on PGlite and PostgreSQL.
// Baseline measured in the same run: the same POSTs (same body and headers) sent straight to
// the same receiver at the same concurrency, without the engine and without a database.
// Also recorded: how fast events are emitted (one transaction each).
//   node --import tsx bench/webhooks.bench.ts
// PostgreSQL: BENCH_DATABASE_URL, else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test
// (a schema of its own, dropped at the end); skipped when unreachable.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createWebhookWorker } from '../src/modules/webhooks/worker.ts';
import { systemClock } from '../src/platform/clock.ts';
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../src/platform/db/database.ts';
import { newId } from '../src/platform/ids.ts';
import { createOutboundClient } from '../src/platform/outbound/ssrf-guard.ts';
import { createEventEmitter } from '../src/platform/outbox/emitter.ts';
import { newWebhookSecret, signedHeaders } from '../src/platform/outbox/signing.ts';
import { openBenchPostgres } from './support/postgres.ts';

const CONCURRENCY = [1, 16, 64];
const EVENTS: Record<number, number> = { 1: 500, 16: 2000, 64: 3000 };
const EMIT_BATCH = 100;
/** The longest a delivery phase may take (the slowest recorded run takes about 13 s). */
const WAIT_MS = 180_000;

async function startCountingReceiver() {
  let count = 0;
  let target = 0;
  let reached: (() => void) | null = null;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200).end();
      count++;
      if (reached && count >= target) {
        reached();
        reached = null;
      }
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    reset() {
      count = 0;
    },
    /** Resolves once n requests arrived; rejects after timeoutMs (a benchmark stops by itself). */
    until(n: number, timeoutMs: number): Promise<void> {
      if (count >= n) return Promise.resolve();
      target = n;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reached = null;
          reject(new Error(`the receiver got ${count} of ${n} deliveries in ${timeoutMs / 1000} s`));
        }, timeoutMs);
        reached = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
type CountingReceiver = Awaited<ReturnType<typeof startCountingReceiver>>;

const config = loadConfig({ LOG_LEVEL: 'silent', ALLOW_PRIVATE_URLS: 'true', DATA_DIR: os.tmpdir() });
const logger = pino({ level: 'silent' });

async function baseline(receiver: CountingReceiver, concurrency: number, n: number): Promise<number> {
  const outbound = createOutboundClient({ allowPrivate: true });
  const body = JSON.stringify({ type: 'call.started', call_id: null, agent_id: 'agent_bench', timestamp: new Date().toISOString(), data: { i: 0 }, event_id: newId('evt') });
  const secret = newWebhookSecret();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        const headers = signedHeaders({ id: 'evt_x', body, at: new Date(), secret, userAgent: 'bench' });
        await outbound.request(receiver.url, { method: 'POST', headers, body, timeoutMs: 10_000, maxBytes: 2048, maxRedirects: 0 });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await outbound.close();
  return n / seconds;
}

async function measure(database: DatabaseHandle, receiver: CountingReceiver, concurrency: number) {
  const n = EVENTS[concurrency];
  const webhooks = { ...config.webhooks, concurrency };
  const events = createEventEmitter({ clock: systemClock, webhooks, notifyInTransaction: database.kind === 'postgres' });
  const workspaceId = newId('ws');
  const now = new Date();
  await database.db.insertInto('workspaces').values({ id: workspaceId, name: 'bench', created_by: null, created_at: now, updated_at: now }).execute();
  const agent = { agentId: 'agent_bench', url: receiver.url, secret: newWebhookSecret(), events: [] };

  // Emit everything first (the worker is not running), so the delivery phase is measured alone.
  const emitStarted = performance.now();
  for (let i = 0; i < n; i += EMIT_BATCH) {
    await database.db.transaction().execute(async (tx) => {
      for (let j = i; j < Math.min(n, i + EMIT_BATCH); j++) await events.emit(tx, { workspaceId, type: 'call.started', agent, data: { i: j } });
    });
  }
  const emitSeconds = (performance.now() - emitStarted) / 1000;

  receiver.reset();
  const outbound = createOutboundClient({ allowPrivate: true });
  const worker = createWebhookWorker({ database, clock: systemClock, webhooks, outbound, logger, wake: events.wake, pollIntervalMs: 50 });
  const started = performance.now();
  await worker.start();
  try {
    await receiver.until(n, WAIT_MS);
  } finally {
    await worker.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  await outbound.close();
  const left = await database.db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('status', '!=', 'succeeded')
    .executeTakeFirstOrThrow();
  return {
    concurrency,
    deliveries: n,
    seconds: Number(seconds.toFixed(3)),
    deliveries_per_second: Math.round(n / seconds),
    not_succeeded: Number(left.n),
    emit_events_per_second: Math.round(n / emitSeconds),
  };
}

/**
 * Wake-up latency: with an idle worker whose poll is a minute away, the time from the start of
 * an emitting transaction to the delivery's arrival at the receiver. `in-process` wakes through the
 * emitter's nudge (same process); `notify` only through PostgreSQL LISTEN/NOTIFY (another instance).
 */
async function wakeLatency(database: DatabaseHandle, receiver: CountingReceiver, mode: 'in-process' | 'notify', trials = 40) {
  const events = createEventEmitter({ clock: systemClock, webhooks: config.webhooks, notifyInTransaction: database.kind === 'postgres' });
  const workspaceId = newId('ws');
  const now = new Date();
  await database.db.insertInto('workspaces').values({ id: workspaceId, name: 'bench wake', created_by: null, created_at: now, updated_at: now }).execute();
  const agent = { agentId: 'agent_bench', url: receiver.url, secret: newWebhookSecret(), events: [] };
  const outbound = createOutboundClient({ allowPrivate: true });
  const worker = createWebhookWorker({
    database,
    clock: systemClock,
    webhooks: config.webhooks,
    outbound,
    logger,
    ...(mode === 'in-process' ? { wake: events.wake } : {}),
    pollIntervalMs: 60_000,
  });
  await worker.start();
  receiver.reset();
  const samples: number[] = [];
  try {
    await new Promise((r) => setTimeout(r, 300)); // let the worker settle into its idle wait
    for (let i = 0; i < trials; i++) {
      const started = performance.now();
      await database.db.transaction().execute((tx) => events.emit(tx, { workspaceId, type: 'call.started', agent, data: { i } }));
      await receiver.until(i + 1, 10_000);
      samples.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 30));
    }
  } finally {
    await worker.stop();
    await outbound.close();
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => Number(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(1));
  return { mode, trials, p50_ms: at(0.5), p95_ms: at(0.95), max_ms: Number(samples[samples.length - 1].toFixed(1)) };
}

function openPostgres() {
  return openBenchPostgres('webhooks', { poolSize: 20 });
}

const receiver = await startCountingReceiver();
const results: Array<Record<string, unknown>> = [];
const notes: string[] = [];

const baselines: Record<number, number> = {};
for (const c of CONCURRENCY) {
  baselines[c] = Math.round(await baseline(receiver, c, EVENTS[c]));
  console.log(`baseline (raw signed POSTs, no engine) c=${c}: ${baselines[c]}/s`);
}

const pgliteDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bench-webhooks-'));
const pglite = await openDatabase({ pgliteDir: path.join(pgliteDir, 'db') });
await migrateToLatest(pglite);
for (const c of CONCURRENCY) {
  const r = await measure(pglite, receiver, c);
  results.push({ database: 'pglite', ...r, baseline_posts_per_second: baselines[c] });
  console.log(`pglite c=${c}: ${r.deliveries_per_second} deliveries/s (${r.deliveries} in ${r.seconds} s), emit ${r.emit_events_per_second} events/s`);
}
const wake: Array<Record<string, unknown>> = [];
wake.push({ database: 'pglite', ...(await wakeLatency(pglite, receiver, 'in-process')) });
console.log(`pglite wake (in-process): ${JSON.stringify(wake[wake.length - 1])}`);
await pglite.close();
fs.rmSync(pgliteDir, { recursive: true, force: true });

const postgres = await openPostgres();
if ('skipped' in postgres) {
  notes.push(postgres.skipped);
  console.log(postgres.skipped);
} else {
  for (const c of CONCURRENCY) {
    const r = await measure(postgres.database, receiver, c);
    results.push({ database: 'postgres', ...r, baseline_posts_per_second: baselines[c] });
    console.log(`postgres c=${c}: ${r.deliveries_per_second} deliveries/s (${r.deliveries} in ${r.seconds} s), emit ${r.emit_events_per_second} events/s`);
  }
  for (const mode of ['in-process', 'notify'] as const) {
    wake.push({ database: 'postgres', ...(await wakeLatency(postgres.database, receiver, mode)) });
    console.log(`postgres wake (${mode}): ${JSON.stringify(wake[wake.length - 1])}`);
  }
  await postgres.drop();
}
await receiver.close();

const out = path.join(import.meta.dirname, 'results', 'webhooks.json');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(
  out,
  `${JSON.stringify(
    {
      benchmark: 'webhook deliveries per second to a local receiver (127.0.0.1, answers 200 at once)',
      measured_at: new Date().toISOString(),
      machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version, platform: `${os.platform()} ${os.release()}` },
      method:
        'N events emitted first (100 per transaction; emit_events_per_second), then the worker loop (start()) delivers them: each delivery is one claim share, one signed POST, one fenced result transaction with its attempt row. baseline_posts_per_second: the same signed POSTs through the same HTTP client at the same concurrency, no database.',
      results,
      wake_latency: {
        method:
          'idle worker (poll 60 s away); time from the start of the emitting transaction to the delivery reaching the receiver; in-process = the emitter nudges a worker of the same process, notify = only PostgreSQL LISTEN/NOTIFY wakes it (another instance). Target: within 200 ms.',
        results: wake,
      },
      notes,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${out}`);
