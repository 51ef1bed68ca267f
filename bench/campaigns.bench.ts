// Campaign dialing (issue 17, part d): a 10,000-contact campaign at concurrency 50 (the workspace's
// max_concurrent_calls raised to match), dialed by the campaign dialer and the calls dialer in one
// process on PGlite. Each call rings for RING_MS of sandbox time (SANDBOX_SPEED divides it) and is
// not answered: the conversation is left out (its TTS and MP3 work is the runtime's, measured by
// bench calls-throughput and voice) so this measures the dialers, the journal and the finish hook.
// Measured: contacts per second and dial lag — the time from a slot freeing (the k-th call of the
// campaign ending) to the next dial it allows (the (k+50)-th call ringing) — p50/p99, goal p99 ≤ 1 s;
// the live calls of the campaign, sampled in the database while it runs. Baseline, same run: plain
// outbound calls queued at once, where the slot is refilled by the calls dialer alone.
//   npm run bench -- campaigns        (BENCH_CONTACTS=10000, BENCH_BASELINE_CALLS=1000, BENCH_SPEED=20)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RING_MS } from '../src/providers/telephony/sandbox.ts';
import type { DialRequest, SandboxTelephony } from '../src/ports/telephony.ts';
import { benchDataDir, buildBenchApp } from './support/bench-app.ts';

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 10_000);
const BASELINE_CALLS = Number(process.env.BENCH_BASELINE_CALLS ?? 1000);
const SPEED = Number(process.env.BENCH_SPEED ?? 20);
const CONCURRENCY = 50;

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** The sandbox's ring, never answered. */
function ringingTelephony(): SandboxTelephony {
  return {
    name: 'sandbox',
    simulated: true,
    ownsCallerIds: false,
    inbound: true,
    dial: (request: DialRequest) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ kind: 'no_answer' }), RING_MS / SPEED);
        request.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve({ kind: 'failed', message: 'canceled while ringing' });
        });
      }),
    acceptInbound: () => {
      throw new Error('not in this bench');
    },
  };
}

type Span = { started_at: Date | string | null; ended_at: Date | string | null };
/** k-th end → (k + concurrency)-th start: how long a freed slot waited for its next dial. */
function dialLags(spans: Span[]): number[] {
  const starts = spans.map((s) => new Date(s.started_at as Date).getTime()).sort((a, b) => a - b);
  const ends = spans.map((s) => new Date(s.ended_at as Date).getTime()).sort((a, b) => a - b);
  const lags: number[] = [];
  for (let k = 0; k + CONCURRENCY < starts.length; k++) lags.push(Math.max(0, starts[k + CONCURRENCY] - ends[k]));
  return lags;
}

async function setUp() {
  const dataDir = benchDataDir('campaigns');
  const built = await buildBenchApp(dataDir, { SANDBOX_SPEED: String(SPEED), ALLOW_PRIVATE_URLS: 'true', MAX_CONCURRENT_CALLS: String(CONCURRENCY) }, { providers: { telephony: ringingTelephony() } });
  await built.app.ready();
  const inject = (method: 'GET' | 'POST' | 'PATCH', url: string, token?: string, payload?: unknown, type?: string) =>
    built.app.inject({ method, url, payload: payload as object, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(type ? { 'content-type': type } : {}) } });
  await inject('POST', '/v1/auth/register', undefined, { email: 'bench@example.com', password: 'bench password' });
  const token = (await inject('POST', '/v1/auth/login', undefined, { email: 'bench@example.com', password: 'bench password' })).json().access_token as string;
  const agent = (await inject('POST', '/v1/agents', token, { name: 'Ada', first_message: 'Hello, Ada here.' })).json();
  const close = async () => {
    await built.app.close();
    await built.database.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { ...built, inject, token, agent, close };
}

async function baseline() {
  const env = await setUp();
  for (let i = 0; i < BASELINE_CALLS; i++) {
    const res = await env.inject('POST', '/v1/calls/outbound', env.token, { agent_id: env.agent.id, to: `+1555400${String(i).padStart(4, '0')}` });
    if (res.statusCode !== 201) throw new Error(res.body);
  }
  const started = performance.now();
  await env.modules.calls.worker.start();
  for (;;) {
    const open = await env.database.db.selectFrom('calls').select((eb) => eb.fn.countAll<string>().as('n')).where('status', 'in', ['queued', 'ringing', 'in_progress']).executeTakeFirstOrThrow();
    if (Number(open.n) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  const spans = await env.database.db.selectFrom('calls').select(['started_at', 'ended_at']).execute();
  await env.modules.calls.worker.stop();
  await env.close();
  const lags = dialLags(spans);
  return { calls: BASELINE_CALLS, seconds: Math.round(seconds * 10) / 10, calls_per_s: Math.round((BASELINE_CALLS / seconds) * 10) / 10, dial_lag_ms: { p50: percentile(lags, 50), p99: percentile(lags, 99), max: percentile(lags, 100) } };
}

async function campaign() {
  const env = await setUp();
  const created = (await env.inject('POST', '/v1/campaigns', env.token, { name: 'bench', agent_id: env.agent.id, concurrency: CONCURRENCY })).json();
  const lines = ['phone,name'];
  for (let i = 0; i < CONTACTS; i++) lines.push(`+1555${String(5_000_000 + i)},Contact ${i}`);
  const uploadStarted = performance.now();
  const upload = await env.inject('POST', `/v1/campaigns/${created.id}/upload`, env.token, `${lines.join('\n')}\n`, 'text/csv');
  const uploadMs = performance.now() - uploadStarted;
  if (upload.json().accepted !== CONTACTS) throw new Error(upload.body);
  await env.modules.calls.worker.start();
  await env.modules.campaigns.dialer.start();
  const started = performance.now();
  const start = await env.inject('POST', `/v1/campaigns/${created.id}/start`, env.token);
  if (start.statusCode !== 200) throw new Error(start.body);
  let maxLive = 0;
  for (;;) {
    const live = await env.database.db.selectFrom('calls').select((eb) => eb.fn.countAll<string>().as('n')).where('campaign_id', '=', created.id).where('status', 'in', ['ringing', 'in_progress']).executeTakeFirstOrThrow();
    maxLive = Math.max(maxLive, Number(live.n));
    const row = await env.database.db.selectFrom('campaigns').select('status').where('id', '=', created.id).executeTakeFirstOrThrow();
    if (row.status === 'completed') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const seconds = (performance.now() - started) / 1000;
  const spans = await env.database.db.selectFrom('calls').select(['started_at', 'ended_at']).where('campaign_id', '=', created.id).execute();
  await env.modules.campaigns.dialer.stop();
  await env.modules.calls.worker.stop();
  await env.close();
  const lags = dialLags(spans);
  return {
    contacts: CONTACTS,
    concurrency: CONCURRENCY,
    upload_ms: Math.round(uploadMs),
    seconds: Math.round(seconds * 10) / 10,
    contacts_per_s: Math.round((CONTACTS / seconds) * 10) / 10,
    calls: spans.length,
    max_live_sampled: maxLive,
    dial_lag_ms: { p50: percentile(lags, 50), p99: percentile(lags, 99), max: percentile(lags, 100) },
  };
}

const base = await baseline();
console.log('baseline (plain outbound calls)', JSON.stringify(base));
const measured = await campaign();
console.log('campaign', JSON.stringify(measured));
const summary = {
  benchmark: 'campaigns',
  machine: { cpus: os.cpus().length, node: process.version, loadavg_1m: Math.round(os.loadavg()[0] * 10) / 10 },
  sandbox_speed: SPEED,
  ring_ms_wall: RING_MS / SPEED,
  goal: { dial_lag_p99_ms: 1000, met: (measured.dial_lag_ms.p99 ?? Number.POSITIVE_INFINITY) <= 1000 },
  baseline: base,
  campaign: measured,
};
fs.mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
fs.writeFileSync(path.join(import.meta.dirname, 'results', 'campaigns.json'), `${JSON.stringify(summary, null, 2)}\n`);
console.log(JSON.stringify(summary, null, 2));
