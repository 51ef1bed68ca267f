// Schedule firing lag (issue 17): 1,000 schedules due within the same minute (random times over a
// BENCH_WINDOW_S window, default 30 s), fired by the schedule worker as the server runs it (job
// runner, a timer armed for the next due schedule, one transaction per batch that queues each
// call through the call journal after the outbound checks). Lag = the commit that dispatched a
// schedule minus its scheduled_at; goal p99 ≤ 1 s. Baseline in the same run: a bare setTimeout
// armed for each of the same due times in the same process (the event loop's own lag, the floor).
// Also a burst: 1,000 due at the same instant (how long the last one waits). PGlite, then
// PostgreSQL: BENCH_DATABASE_URL, else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test
// (a schema of its own, dropped at the end); skipped when unreachable.
//   node --import tsx bench/schedules.bench.ts        (BENCH_SCHEDULES=1000, BENCH_WINDOW_S=30)
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { systemClock } from '../src/platform/clock.ts';
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../src/platform/db/database.ts';
import { newId } from '../src/platform/ids.ts';
import { createLogger } from '../src/platform/logging.ts';
import { createScheduleDispatcher } from '../src/modules/schedules/dispatch.ts';
import { createSchedulesRepo } from '../src/modules/schedules/repo.ts';
import { createScheduleWorker } from '../src/modules/schedules/worker.ts';
import { openBenchPostgres } from './support/postgres.ts';

const COUNT = Number(process.env.BENCH_SCHEDULES ?? 1000);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_S ?? 30) * 1000;
const LEAD_MS = 4000;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0);
};
const summary = (lags: number[]) => ({ p50_ms: percentile(lags, 50), p99_ms: percentile(lags, 99), max_ms: percentile(lags, 100) });

async function measure(database: DatabaseHandle, label: string) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bench-sched-'));
  const config = loadConfig({ DATA_DIR: dataDir, RATE_LIMIT_USER_PER_MIN: '1000000', SIGNUP_CREDIT_USD: '1000', LOG_LEVEL: 'silent' });
  const { app, platform, modules: { calls } } = await buildApp({ config, database, clock: systemClock, jwtSecret: 'x'.repeat(40), logger: createLogger({ level: 'silent' }) });
  await app.ready();
  const inject = (method: 'POST', url: string, token?: string, payload?: unknown) =>
    app.inject({ method, url, payload: payload as object, headers: token ? { authorization: `Bearer ${token}` } : {} });
  const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
  await inject('POST', '/v1/auth/register', undefined, { email, password: 'bench password' });
  const token = (await inject('POST', '/v1/auth/login', undefined, { email, password: 'bench password' })).json().access_token;
  const agent = (await inject('POST', '/v1/agents', token, { name: 'Ada', first_message: 'Hello, Ada here.' })).json();
  const workspaceId = (await platform.db.selectFrom('agents').select('workspace_id').where('id', '=', agent.id).executeTakeFirstOrThrow()).workspace_id;

  // The worker as module.ts builds it, its dispatcher wrapped to time each commit.
  const repo = createSchedulesRepo();
  const real = createScheduleDispatcher({ db: platform.db, clock: systemClock, journal: calls.journal, repo, telephony: { name: 'sandbox', ownsCallerIds: false }, nudgeCalls: () => undefined });
  const firedAt = new Map<string, number>();
  let onFired: (() => void) | null = null;
  const dispatcher = {
    ...real,
    async fireDue(limit: number) {
      const rows = await real.fireDue(limit);
      const now = Date.now();
      for (const row of rows) firedAt.set(row.id, now);
      if (rows.length > 0) onFired?.();
      return rows;
    },
  };
  const worker = createScheduleWorker({ database: platform.database, clock: platform.clock, logger: platform.logger, dispatcher, repo });

  async function insert(times: number[]): Promise<Map<string, number>> {
    const due = new Map<string, number>();
    const now = new Date();
    const rows = times.map((at, i) => {
      const id = newId('sch');
      due.set(id, at);
      return {
        id,
        workspace_id: workspaceId,
        agent_id: agent.id,
        to_number: `+1555010${String(1000 + i).padStart(4, '0')}`,
        from_number: null,
        scheduled_at: new Date(at),
        variables: JSON.stringify({ i: String(i) }),
        metadata: JSON.stringify({}),
        simulation: null,
        status: 'scheduled' as const,
        late: false,
        created_at: now,
        updated_at: now,
      };
    });
    for (let i = 0; i < rows.length; i += 200) await platform.db.insertInto('schedules').values(rows.slice(i, i + 200)).execute();
    return due;
  }

  function allFired(due: Map<string, number>, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${label}: ${[...due.keys()].filter((id) => firedAt.has(id)).length} of ${due.size} fired`)), timeoutMs);
      const check = () => {
        for (const id of due.keys()) if (!firedAt.has(id)) return;
        clearTimeout(timer);
        onFired = null;
        resolve();
      };
      onFired = check;
      check();
    });
  }

  await worker.start();
  try {
    // Spread: COUNT schedules at random times within the window; bare timers at the same times.
    const start = Date.now() + LEAD_MS;
    const times = Array.from({ length: COUNT }, () => start + Math.random() * WINDOW_MS);
    const due = await insert(times);
    worker.nudge();
    const baseline: number[] = [];
    for (const at of times) setTimeout(() => baseline.push(Date.now() - at), at - Date.now());
    await allFired(due, LEAD_MS + WINDOW_MS + 60_000);
    const lags = [...due].map(([id, at]) => (firedAt.get(id) as number) - at);
    const late = await platform.db.selectFrom('schedules').select((eb) => eb.fn.countAll<number>().as('n')).where('id', 'in', [...due.keys()]).where('late', '=', true).executeTakeFirstOrThrow();
    const dispatched = await platform.db.selectFrom('calls').select((eb) => eb.fn.countAll<number>().as('n')).where('schedule_id', 'in', [...due.keys()]).executeTakeFirstOrThrow();
    const spread = { scenario: 'spread', schedules: COUNT, window_s: WINDOW_MS / 1000, lag: summary(lags), baseline_timer_lag: summary(baseline), late: Number(late.n), calls: Number(dispatched.n) };
    console.log(`${label} spread: ${JSON.stringify(spread)}`);

    // Burst: COUNT schedules due at the same instant.
    const instant = Date.now() + 2000;
    const burstDue = await insert(Array.from({ length: COUNT }, () => instant));
    worker.nudge();
    await allFired(burstDue, 120_000);
    const burstLags = [...burstDue].map(([id, at]) => (firedAt.get(id) as number) - at);
    const burst = { scenario: 'burst', schedules: COUNT, lag: summary(burstLags), fired_per_second: Math.round(COUNT / (Math.max(...burstLags) / 1000)) };
    console.log(`${label} burst: ${JSON.stringify(burst)}`);
    return [spread, burst].map((r) => ({ database: label, ...r }));
  } finally {
    await worker.stop();
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function openPostgres() {
  return openBenchPostgres('schedules', { poolSize: 10 });
}

const results: Array<Record<string, unknown>> = [];
const notes: string[] = [];

const pgliteDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bench-sched-db-'));
const pglite = await openDatabase({ pgliteDir: path.join(pgliteDir, 'db') });
await migrateToLatest(pglite);
results.push(...(await measure(pglite, 'pglite')));
await pglite.close();
fs.rmSync(pgliteDir, { recursive: true, force: true });

const postgres = await openPostgres();
if ('skipped' in postgres) {
  notes.push(postgres.skipped);
  console.log(postgres.skipped);
} else {
  try {
    results.push(...(await measure(postgres.database, 'postgres')));
  } finally {
    await postgres.drop();
  }
}

const spreads = results.filter((r) => r.scenario === 'spread') as Array<{ database: string; lag: { p99_ms: number } }>;
const output = {
  bench: 'schedules',
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, node: process.version },
  goal: 'spread: lag p99 ≤ 1000 ms',
  goal_met: spreads.every((r) => r.lag.p99_ms <= 1000),
  results,
  notes,
};
fs.mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
fs.writeFileSync(path.join(import.meta.dirname, 'results', 'schedules.json'), `${JSON.stringify(output, null, 2)}\n`);
console.log(`goal (spread p99 ≤ 1 s) ${output.goal_met ? 'met' : 'NOT met'}`);
