// Calls through the whole platform (issue 14, part c): 1,000 sandbox calls placed over the API
// at a high SANDBOX_SPEED, dialed by the call worker, recorded (MP3 in the worker-thread pool),
// billed and journaled, with their events delivered to a local receiver by the webhook worker.
// Measured: calls/s from the first POST to the last terminal state, and call.ended delivery
// latency (the envelope's timestamp to its arrival at the receiver) p50/p95; the same run with
// the agent's webhook off is the baseline. PGlite in a temporary DATA_DIR, one process.
//   node --import tsx bench/calls-throughput.bench.ts      (BENCH_CALLS=1000, BENCH_SPEED=100)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../src/platform/clock.ts';
import { startReceiver } from '../src/modules/webhooks/test-receiver.ts';
import { createWebhookWorker } from '../src/modules/webhooks/worker.ts';
import { benchDataDir, buildBenchApp } from './support/bench-app.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const SPEED = process.env.BENCH_SPEED ?? '100';

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
};

async function run(withWebhooks: boolean) {
  const dataDir = benchDataDir('calls');
  const receiver = await startReceiver();
  const arrivals = new Map<string, number>();
  const { app, platform, modules: { calls }, config, database } = await buildBenchApp(dataDir, { SANDBOX_SPEED: SPEED, ALLOW_PRIVATE_URLS: 'true', MAX_CONCURRENT_CALLS: '1000' });
  await app.ready();
  const webhooks = createWebhookWorker({ database, clock: systemClock, webhooks: config.webhooks, outbound: platform.outbound, logger: app.log, wake: platform.events.wake });
  const inject = (method: 'GET' | 'POST', url: string, token?: string, payload?: unknown) =>
    app.inject({ method, url, payload: payload as object, headers: token ? { authorization: `Bearer ${token}` } : {} });
  await inject('POST', '/v1/auth/register', undefined, { email: 'bench@example.com', password: 'bench password' });
  const token = (await inject('POST', '/v1/auth/login', undefined, { email: 'bench@example.com', password: 'bench password' })).json().access_token;
  const agent = (await inject('POST', '/v1/agents', token, { name: 'Ada', first_message: 'Hello, Ada here.', ...(withWebhooks ? { webhook_url: receiver.url, webhook_events: ['call.ended'] } : {}) })).json();
  const original = receiver.received;
  await calls.worker.start();
  await webhooks.start();
  const started = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < CALLS; i++) {
    const res = await inject('POST', '/v1/calls/outbound', token, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['Goodbye!'] } });
    ids.push(res.json().id);
  }
  const placedMs = performance.now() - started;
  // Done when every call has ended (and, with webhooks, every call.ended has arrived).
  for (;;) {
    const live = await database.db.selectFrom('calls').select((eb) => eb.fn.countAll<number>().as('n')).where('status', 'in', ['queued', 'ringing', 'in_progress']).executeTakeFirstOrThrow();
    const delivered = original.filter((r) => r.body.includes('"call.ended"')).length;
    if (Number(live.n) === 0 && (!withWebhooks || delivered >= CALLS)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const seconds = (performance.now() - started) / 1000;
  for (const hit of original) {
    const body = JSON.parse(hit.body);
    if (body.type === 'call.ended') arrivals.set(body.call_id, hit.at - Date.parse(body.timestamp));
  }
  const statuses = await database.db.selectFrom('calls').select(['status']).execute();
  await webhooks.stop();
  await app.close();
  await database.close();
  await receiver.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  const latencies = [...arrivals.values()];
  return {
    webhooks: withWebhooks,
    calls: CALLS,
    completed: statuses.filter((s) => s.status === 'completed').length,
    place_ms: Math.round(placedMs),
    total_s: Math.round(seconds * 10) / 10,
    calls_per_s: Math.round((CALLS / seconds) * 10) / 10,
    call_ended_delivery_p50_ms: percentile(latencies, 50),
    call_ended_delivery_p95_ms: percentile(latencies, 95),
  };
}

const baseline = await run(false);
console.log(JSON.stringify(baseline));
const measured = await run(true);
console.log(JSON.stringify(measured));
const summary = { benchmark: 'calls-throughput', machine: { cpus: os.cpus().length, node: process.version }, sandbox_speed: Number(SPEED), baseline, measured };
fs.mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
fs.writeFileSync(path.join(import.meta.dirname, 'results', 'calls-throughput.json'), `${JSON.stringify(summary, null, 2)}\n`);
