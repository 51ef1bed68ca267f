// HTTP benchmark of an authenticated read: GET /v1/agents/{id} with an API key and GET
// /v1/auth/me with a JWT, through the whole product (buildApp + listen, configured as `npm start`
// is: logging at info, rate limits, request ids, the gate, schemas), against a bare Fastify 5
// server on the same database handle answering the same JSON with one query
// (bench/support/http-bare-server.ts). 32 connections from a load generator in a child process
// (bench/support/http-load.ts: undici, a fixed number of requests in flight); product and bare
// are interleaved round by round, so both see the same machine. On PGlite, and on PostgreSQL
// when reachable (BENCH_DATABASE_URL, else TEST_DATABASE_URL, else DATABASE_URL, else
// postgres://postgres@127.0.0.1:5432/test; a schema of its own, dropped at the end).
//   npm run bench -- http   BENCH_HTTP_PROFILE=1: a CPU profile of the product phases, summarised;
//                           BENCH_HTTP_ONLY=pglite|postgres: one database only
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { fork } from 'node:child_process';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { tracingEnv, tracingSuffix } from './support/otlp-sink.ts';
import { systemClock } from '../src/platform/clock.ts';
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../src/platform/db/database.ts';
import { createLogger, logDestination } from '../src/platform/logging.ts';
import { startBareServer } from './support/http-bare-server.ts';
import type { LoadRequest, LoadResult } from './support/http-load.ts';
import { openBenchPostgres } from './support/postgres.ts';
import { type SampledProfile, selfTimeByFunction, selfTimeByPlace } from './support/profile.ts';

const CONNECTIONS = 32;
const WARMUP_MS = 1000;
const DURATION_MS = 2500;
/** Short alternating phases: a neighbour's burst of load hits both sides alike. */
const ROUNDS = 4;
const GOAL_RATIO = 0.7;
/** Issue 33: the product's p99 at most 1.5 times the bare server's in the same run. */
const GOAL_P99_VS_BARE = 1.5;

const here = import.meta.dirname;
const loader = fork(path.join(here, 'support/http-load.ts'), { execArgv: ['--import', 'tsx'] });

/** One load run in the load generator's process (one at a time), with this process's CPU time per request. */
function send(request: LoadRequest): Promise<LoadResult & { cpuUsPerRequest: number }> {
  const cpu = process.cpuUsage();
  return new Promise((resolve, reject) => {
    loader.once('message', (message: { result?: LoadResult; error?: string }) => {
      const used = process.cpuUsage(cpu);
      if (!message.result) return reject(new Error(message.error));
      resolve({ ...message.result, cpuUsPerRequest: (used.user + used.system) / Math.max(1, message.result.total) });
    });
    loader.send(request);
  });
}

let profiler: inspector.Session | null = null;
const profiles: Array<{ name: string; profile: unknown }> = [];

async function profiled<T>(name: string, work: () => Promise<T>): Promise<T> {
  if (!process.env.BENCH_HTTP_PROFILE) return work();
  if (!profiler) {
    profiler = new inspector.Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
  }
  await profiler.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await profiler.post('Profiler.stop');
    profiles.push({ name, profile });
  }
}

/** JSON with every object's keys sorted (the product's serialiser orders them by its schema). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

async function setUp(database: DatabaseHandle) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bench-http-'));
  const tracing = await tracingEnv();
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    RATE_LIMIT_USER_PER_MIN: '1000000',
    RATE_LIMIT_IP_PER_MIN: '1000000',
    PUBLIC_BASE_URL: 'http://localhost:3000',
    ...tracing.env,
  });
  // As `npm start` logs (info, a line per request), into /dev/null instead of a terminal.
  const logger = createLogger({ level: 'info', destination: logDestination('/dev/null') });
  const { app } = await buildApp({ config, database, clock: systemClock, jwtSecret: randomBytes(32).toString('hex'), logger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  const productUrl = `http://127.0.0.1:${address.port}`;

  const email = `bench-${randomBytes(4).toString('hex')}@example.com`;
  const registered = await app.inject({ method: 'POST', url: '/v1/auth/register', payload: { email, password: 'correct horse battery' } });
  const login = await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password: 'correct horse battery' } });
  const jwt = login.json().access_token as string;
  const key = (await app.inject({ method: 'POST', url: '/v1/api-keys', headers: { authorization: `Bearer ${jwt}` }, payload: { name: 'bench', scope: 'write' } })).json().key as string;
  const agent = await app.inject({ method: 'POST', url: '/v1/agents', headers: { authorization: `Bearer ${key}` }, payload: { name: 'Bench agent', prompt: 'You answer questions about the bench.' } });
  if (agent.statusCode !== 201) throw new Error(`agent: ${agent.body}`);
  const agentId = agent.json().id as string;
  const membership = await database.db.selectFrom('memberships').select('workspace_id').where('user_id', '=', registered.json().id).executeTakeFirstOrThrow();
  const bare = await startBareServer(database, { workspaceId: membership.workspace_id, userId: registered.json().id });

  // The bare server must answer exactly what the product answers.
  for (const [url, token] of [[`/v1/agents/${agentId}`, key], ['/v1/auth/me', jwt]] as const) {
    const product = await fetch(`${productUrl}${url}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.text());
    const floor = await fetch(`${bare.url}${url}`).then((r) => r.text());
    if (canonical(JSON.parse(product)) !== canonical(JSON.parse(floor))) throw new Error(`bare and product differ on ${url}:\n${product}\n${floor}`);
  }
  return {
    productUrl,
    bare,
    scenarios: [
      { name: 'GET /v1/agents/{id} (API key)', path: `/v1/agents/${agentId}`, headers: { authorization: `Bearer ${key}` } },
      { name: 'GET /v1/auth/me (JWT)', path: '/v1/auth/me', headers: { authorization: `Bearer ${jwt}` } },
    ],
    async close() {
      await bare.close();
      await app.close();
      await tracing.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

async function measure(kind: string, database: DatabaseHandle) {
  const setup = await setUp(database);
  type Measured = LoadResult & { cpuUsPerRequest: number };
  const runs = new Map<string, { product: Measured[]; bare: Measured[] }>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const scenario of setup.scenarios) {
        const entry = runs.get(scenario.name) ?? { product: [], bare: [] };
        runs.set(scenario.name, entry);
        const base = { connections: CONNECTIONS, warmupMs: WARMUP_MS, durationMs: DURATION_MS };
        entry.product.push(await profiled(`${kind} ${scenario.name}`, () => send({ ...base, url: setup.productUrl, path: scenario.path, headers: scenario.headers })));
        entry.bare.push(await profiled(`${kind} bare ${scenario.name}`, () => send({ ...base, url: setup.bare.url, path: scenario.path, headers: {} })));
      }
    }
  } finally {
    await setup.close();
  }
  return [...runs].map(([name, { product, bare }]) => {
    const sum = (results: Measured[]) => {
      const requests = results.reduce((n, r) => n + r.requests, 0);
      const median = (values: number[]) => {
        const sorted = [...values].sort((x, y) => x - y);
        const mid = Math.floor(sorted.length / 2);
        return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
      };
      return {
        rps: Math.round(results.reduce((n, r) => n + r.rps, 0) / results.length),
        rps_by_round: results.map((r) => Math.round(r.rps)),
        // CPU time of the server process per request (median round): steadier than rps on a shared machine.
        cpu_us_per_request: Math.round(median(results.map((r) => r.cpuUsPerRequest))),
        p50_ms: round1(median(results.map((r) => r.p50Ms))),
        // The median round's p99, and the worst round's.
        p99_ms: round1(median(results.map((r) => r.p99Ms))),
        p99_worst_round_ms: round1(Math.max(...results.map((r) => r.p99Ms))),
        requests,
        errors: results.reduce((n, r) => n + r.errors, 0),
        non_200: results.reduce((n, r) => n + Object.values(r.statuses).reduce((a, b) => a + b, 0), 0),
      };
    };
    const p = sum(product);
    const b = sum(bare);
    const ratio = Math.round((p.rps / b.rps) * 100) / 100;
    const cpuRatio = Math.round((b.cpu_us_per_request / p.cpu_us_per_request) * 100) / 100;
    const line = { database: kind, scenario: name, product: p, bare: b, ratio, cpu_ratio: cpuRatio, p99_vs_bare: Math.round((p.p99_ms / b.p99_ms) * 100) / 100, goal_met: ratio >= GOAL_RATIO && p.p99_ms <= GOAL_P99_VS_BARE * b.p99_ms };
    console.log(`${kind.padEnd(8)} ${name.padEnd(30)} product ${String(p.rps).padStart(6)} rps p50 ${p.p50_ms} ms p99 ${p.p99_ms} ms | bare ${String(b.rps).padStart(6)} rps p50 ${b.p50_ms} ms p99 ${b.p99_ms} ms | ${Math.round(ratio * 100)} % | CPU/request ${p.cpu_us_per_request} µs vs ${b.cpu_us_per_request} µs (${Math.round(cpuRatio * 100)} %)`);
    return line;
  });
}

function openPostgres() {
  return openBenchPostgres('http', { extraEnv: ['TEST_DATABASE_URL'] });
}

async function main() {
  const results: unknown[] = [];
  const started = Date.now();
  const only = process.env.BENCH_HTTP_ONLY;
  if (only !== 'postgres') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bench-http-pglite-'));
    const pglite = await openDatabase({ pgliteDir: path.join(dir, 'pglite') });
    await migrateToLatest(pglite);
    try {
      results.push(...(await measure('pglite', pglite)));
    } finally {
      await pglite.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  let postgres: string | undefined;
  const opened = only === 'pglite' ? { skipped: 'BENCH_HTTP_ONLY=pglite' } : await openPostgres();
  if ('skipped' in opened) {
    postgres = opened.skipped;
    console.log(`postgres: skipped (${opened.skipped})`);
  } else {
    try {
      results.push(...(await measure('postgres', opened.database)));
    } finally {
      await opened.drop();
    }
  }
  loader.kill();
  const out = path.join(here, 'results', `http${tracingSuffix()}.json`);
  const report = {
    benchmark: 'http',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version },
    setup: { connections: CONNECTIONS, warmup_ms: WARMUP_MS, duration_ms: DURATION_MS, rounds: ROUNDS, goal: { ratio: GOAL_RATIO, p99_vs_bare: GOAL_P99_VS_BARE } },
    results,
    ...(postgres ? { postgres_skipped: postgres } : {}),
    ...(profiles.length > 0
      ? { profiles: profiles.map(({ name, profile }) => ({ name, by_place: selfTimeByPlace(profile as SampledProfile), top_functions: selfTimeByFunction(profile as SampledProfile, 15) })) }
      : {}),
    seconds: Math.round((Date.now() - started) / 1000),
  };
  fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`written ${path.relative(process.cwd(), out)} in ${report.seconds} s`);
  for (const { name, profile } of profiles) {
    const file = path.join(os.tmpdir(), `http-bench-${name.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile`);
    fs.writeFileSync(file, JSON.stringify(profile));
    console.log(`\nprofile of ${name}: ${file}`);
    for (const row of selfTimeByPlace(profile as SampledProfile)) console.log(`  ${row.share.padStart(6)}  ${row.place}`);
    console.log('  functions:');
    for (const row of selfTimeByFunction(profile as SampledProfile)) console.log(`  ${row.share.padStart(6)}  ${row.frame}`);
  }
}

await main();
