// One platform server of bench/tracing.bench.ts, in a process of its own so that its CPU time
// is its own: built as `npm start` builds it (logging at info into an async destination, rate
// limits, the gate, schemas), with tracing off or on as BENCH_TRACING_MODE says, on a PGlite of
// its own or a PostgreSQL schema of its own (BENCH_TRACING_DB); or several such apps in the one
// process (a list of modes). It seeds a user, an API key and an agent in each, tells its parent
// the scenarios, then answers `cpu` (its process.cpuUsage()), `flush` and `close`.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { systemClock } from '../../src/platform/clock.ts';
import { migrateToLatest, openDatabase } from '../../src/platform/db/database.ts';
import { createLogger, logDestination } from '../../src/platform/logging.ts';
import { openBenchPostgres } from './postgres.ts';
import { insideShare } from './profile.ts';

// `off-b` is a second tracing-off server: the control of an A/A run (what the bench's own set-up
// makes two identical servers differ by). `on-no-reads`: tracing on with TRACE_READS_RATIO=0, so a
// read gets no span at all: what being on costs a request that is not traced.
export type TracingMode = 'off' | 'off-b' | 'on' | 'on-every-read' | 'on-no-reads';

export interface TracingScenario {
  name: string;
  path: string;
  method: 'GET' | 'PATCH';
  body?: unknown;
  headers: Record<string, string>;
}

// BENCH_TRACING_MODE may list several modes (`off,on`): one app per mode in this one process,
// each on a port and a database of its own (bench/tracing-instructions.bench.ts: the same JIT and
// heap for both, so that what differs between their counts is tracing, not the process).
const modes = (process.env.BENCH_TRACING_MODE ?? '').split(',') as TracingMode[];
const mode = modes.join('+');
const sink = process.env.BENCH_TRACING_SINK ?? '';

async function openStore(of: TracingMode) {
  if (process.env.BENCH_TRACING_DB === 'postgres') {
    const opened = await openBenchPostgres(`tracing_${of.replaceAll('-', '_')}`);
    if ('skipped' in opened) throw new Error(opened.skipped);
    return { database: opened.database, close: opened.drop };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bench-tracing-'));
  const database = await openDatabase({ pgliteDir: path.join(dir, 'pglite') });
  await migrateToLatest(database);
  const close = async () => {
    await database.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { database, close };
}

/** One platform app with tracing as `of` says, listening, seeded with a user, an API key and an agent. */
async function serve(of: TracingMode) {
  const tracing = of === 'off' || of === 'off-b' ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: sink, OTEL_BSP_SCHEDULE_DELAY: process.env.BENCH_TRACING_EXPORT_DELAY_MS ?? '1000', ...(of === 'on-every-read' ? { TRACE_READS_RATIO: '1' } : {}), ...(of === 'on-no-reads' ? { TRACE_READS_RATIO: '0' } : {}) };
  const store = await openStore(of);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bench-tracing-data-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info', RATE_LIMIT_USER_PER_MIN: '1000000', RATE_LIMIT_IP_PER_MIN: '1000000', PUBLIC_BASE_URL: 'http://localhost:3000', ...tracing });
  const logger = createLogger({ level: 'info', destination: logDestination('/dev/null') });
  const { app, platform } = await buildApp({ config, database: store.database, clock: systemClock, jwtSecret: randomBytes(32).toString('hex'), logger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');

  const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
  await app.inject({ method: 'POST', url: '/v1/auth/register', payload: { email, password: 'correct horse battery' } });
  const jwt = (await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password: 'correct horse battery' } })).json().access_token as string;
  const key = (await app.inject({ method: 'POST', url: '/v1/api-keys', headers: { authorization: `Bearer ${jwt}` }, payload: { name: 'bench', scope: 'write' } })).json().key as string;
  const agent = await app.inject({ method: 'POST', url: '/v1/agents', headers: { authorization: `Bearer ${key}` }, payload: { name: 'Bench agent', prompt: 'You answer questions about the bench.' } });
  if (agent.statusCode !== 201) throw new Error(`agent: ${agent.body}`);
  const agentPath = `/v1/agents/${agent.json().id}`;
  const scenarios: TracingScenario[] = [
    { name: 'GET /v1/agents/{id} (API key)', path: agentPath, method: 'GET', headers: { authorization: `Bearer ${key}` } },
    { name: 'GET /v1/auth/me (JWT)', path: '/v1/auth/me', method: 'GET', headers: { authorization: `Bearer ${jwt}` } },
    { name: 'PATCH /v1/agents/{id} (API key, a write)', path: agentPath, method: 'PATCH', body: { name: 'Bench agent' }, headers: { authorization: `Bearer ${key}` } },
  ];
  const close = async () => {
    await app.close();
    await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { mode: of, url: `http://127.0.0.1:${address.port}`, scenarios, flush: () => platform.telemetry.flush(), close };
}

const apps: Array<Awaited<ReturnType<typeof serve>>> = [];
for (const of of modes) apps.push(await serve(of));

// BENCH_TRACING_PROFILE=1: each run is CPU-profiled in this process (`profile-start`, then
// `profile-stop` answers the share of its busy samples inside OpenTelemetry and the platform's
// telemetry code: what tracing itself costs, read in one process, free of the neighbours' noise).
let profiler: inspector.Session | null = null;
async function profile(step: 'profile-start' | 'profile-stop') {
  if (!profiler) {
    profiler = new inspector.Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 250 });
  }
  if (step === 'profile-start') return void (await profiler.post('Profiler.start'));
  const { profile: taken } = await profiler.post('Profiler.stop');
  if (process.env.BENCH_TRACING_PROFILE_DIR) fs.writeFileSync(path.join(process.env.BENCH_TRACING_PROFILE_DIR, `${mode}-${Date.now()}.cpuprofile`), JSON.stringify(taken));
  return insideShare(taken, (url) => url.includes('/@opentelemetry/') || url.includes('/src/platform/telemetry/'));
}

// `ready`: the first app's URL and scenarios, and every app's (`apps`, in the order of the modes).
process.send?.({ ready: { url: apps[0].url, scenarios: apps[0].scenarios, apps: apps.map(({ mode: of, url, scenarios }) => ({ mode: of, url, scenarios })) } });
process.on('message', async (message: { type: 'cpu' | 'flush' | 'close' | 'profile-start' | 'profile-stop' }) => {
  if (message.type === 'cpu') return process.send?.({ cpu: process.cpuUsage() });
  // Exports every ended span now (nothing when tracing is off): bench/tracing-instructions.bench.ts
  // counts one export per window instead of its timer's, which the slowed process would fire ~50× as often.
  if (message.type === 'flush') {
    for (const app of apps) await app.flush();
    return process.send?.({ flushed: true });
  }
  if (message.type === 'profile-start' || message.type === 'profile-stop') return process.send?.({ profile: (await profile(message.type)) ?? null });
  for (const app of apps) await app.close();
  process.send?.({ closed: true });
  process.exit(0);
});
