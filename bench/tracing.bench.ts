// What tracing costs a request (issue 32): platform servers, each in its own process
// (bench/support/tracing-server.ts) — by default tracing off, tracing on as configured (reads
// sampled at TRACE_READS_RATIO 0.1, every write, call and job traced), and tracing on for every
// read (TRACE_READS_RATIO=1); BENCH_TRACING_MODES below chooses others and their order — loaded
// at the same time, each by a load generator of its own (bench/support/http-load.ts, 32
// connections shared out), with the same requests, so that a neighbour's burst falls on all alike
// (BENCH_TRACING_SEQUENTIAL=1: in turns, in a rotating order). Each server's CPU time per request is
// read from the server's own process around each run: on a shared machine the steady figure (rps
// swings with the neighbours). Spans go over OTLP/HTTP to a local sink in this process, every second.
// Goal: tracing on (the default configuration) costs ≤ 5 % CPU per request on every request kind.
//   npm run bench -- tracing      BENCH_TRACING_ROUNDS (5), BENCH_TRACING_ONLY=pglite|postgres
import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childReply } from './support/child-reply.ts';
import type { LoadRequest, LoadResult } from './support/http-load.ts';
import { startOtlpSink } from './support/otlp-sink.ts';
import { openBenchPostgres } from './support/postgres.ts';
import type { TracingMode, TracingScenario } from './support/tracing-server.ts';

const ROUNDS = Number(process.env.BENCH_TRACING_ROUNDS ?? 5);
const CONNECTIONS = 32;
const WARMUP_MS = 1000;
const DURATION_MS = 2500;
const GOAL_CPU_OVERHEAD = 0.05;
const ALL_MODES: TracingMode[] = ['off', 'off-b', 'on', 'on-every-read', 'on-no-reads'];
// BENCH_TRACING_MODES: which servers, in the order they start and are listed (default
// off,on,on-every-read). off,on leaves the every-read server out; on,off swaps the positions;
// off,off-b is an A/A run: two tracing-off servers, whose difference is the bench's own bias.
const MODES = (process.env.BENCH_TRACING_MODES ?? 'off,on,on-every-read').split(',') as TracingMode[];
if (MODES.some((mode) => !ALL_MODES.includes(mode)) || new Set(MODES).size !== MODES.length || !MODES.includes('off') || MODES.length < 2) {
  throw new Error(`BENCH_TRACING_MODES must list off and at least one of ${ALL_MODES.slice(1).join(', ')}, each once`);
}
const here = import.meta.dirname;
// BENCH_TRACING_RATE=<requests/s>: each server loaded at that fixed rate (paced), not flat out: the
// machine is then not saturated, and the CPU per request is the request's, not the contention's.
const RATE = process.env.BENCH_TRACING_RATE ? Number(process.env.BENCH_TRACING_RATE) : undefined;
// BENCH_TRACING_PROFILE=1: every server profiles each run; the share of its CPU inside tracing code
// (BENCH_TRACING_PROFILE_DIR=<dir> also writes each raw .cpuprofile there, for DevTools).
const PROFILE = process.env.BENCH_TRACING_PROFILE === '1';
type ProfileShare = { busy_samples: number; inside_percent: number; gc_percent: number };


async function startServer(mode: TracingMode, db: string, sink: string) {
  const child = fork(path.join(here, 'support/tracing-server.ts'), { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_TRACING_MODE: mode, BENCH_TRACING_DB: db, BENCH_TRACING_SINK: sink } });
  const { ready } = await childReply<{ ready: { url: string; scenarios: TracingScenario[] } }>(child);
  const cpu = async () => {
    const { cpu: used } = await childReply<{ cpu: NodeJS.CpuUsage }>(child, { type: 'cpu' });
    return used.user + used.system;
  };
  const profile = async (step: 'profile-start' | 'profile-stop') => (await childReply<{ profile: ProfileShare | null }>(child, { type: step })).profile;
  return { mode, ...ready, cpu, profile, close: () => childReply(child, { type: 'close' }) };
}

// One load generator per server: the servers are loaded at the same time, so that whatever else
// the machine does in a window falls on every mode alike (BENCH_TRACING_SEQUENTIAL=1: in turns).
const SIMULTANEOUS = process.env.BENCH_TRACING_SEQUENTIAL !== '1';
const loaders = MODES.map(() => fork(path.join(here, 'support/http-load.ts'), { execArgv: ['--import', 'tsx'] }));
async function load(loader: ChildProcess, request: LoadRequest): Promise<LoadResult> {
  const reply = await childReply<{ result?: LoadResult; error?: string }>(loader, request);
  if (!reply.result) throw new Error(reply.error);
  return reply.result;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const pct = (ratio: number) => Math.round(ratio * 1000) / 10;
/** The first and third quartiles (the spread of the per-round overheads around their median). */
const quartiles = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1) + 0.5))];
  return [at(0.25), at(0.75)];
};

/** A mode's profiles over the rounds: the medians of tracing's share and the collector's, and the samples read. */
const round2 = (n: number) => Math.round(n * 100) / 100;
const profileOf = (list: ProfileShare[]) => ({
  tracing_code_percent: round2(median(list.map((p) => p.inside_percent))),
  gc_percent: round2(median(list.map((p) => p.gc_percent))),
  busy_samples: list.reduce((n, p) => n + p.busy_samples, 0),
});

async function measure(db: string, sink: string) {
  const servers: Array<Awaited<ReturnType<typeof startServer>>> = [];
  for (const mode of MODES) servers.push(await startServer(mode, db, sink));
  type Run = { cpuUs: number; rps: number; p99: number; non200: number };
  const runs = new Map<string, Run[]>();
  const shares = new Map<string, ProfileShare[]>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (let index = 0; index < servers[0].scenarios.length; index++) {
        const run = async (server: (typeof servers)[number], loader: ChildProcess) => {
          const own = server.scenarios[index];
          if (PROFILE) await server.profile('profile-start');
          const before = await server.cpu();
          const connections = SIMULTANEOUS ? Math.ceil(CONNECTIONS / servers.length) : CONNECTIONS;
          const result = await load(loader, { url: server.url, path: own.path, method: own.method, body: own.body, headers: own.headers, connections, warmupMs: WARMUP_MS, durationMs: DURATION_MS, ratePerSecond: RATE });
          const cpuUs = (await server.cpu()) - before;
          const key = `${own.name}|${server.mode}`;
          if (PROFILE) shares.set(key, [...(shares.get(key) ?? []), (await server.profile('profile-stop')) as ProfileShare]);
          const non200 = Object.entries(result.statuses).filter(([code]) => code !== '200').reduce((n, [, count]) => n + count, 0);
          runs.set(key, [...(runs.get(key) ?? []), { cpuUs: cpuUs / Math.max(1, result.total), rps: result.rps, p99: result.p99Ms, non200 }]);
        };
        if (SIMULTANEOUS) await Promise.all(servers.map((server, i) => run(server, loaders[i])));
        else {
          // Each round starts with another server, so that no mode always follows the same one.
          for (const i of servers.keys()) await run(servers[(i + round + index) % servers.length], loaders[0]);
        }
      }
      console.log(`${db}: round ${round + 1} of ${ROUNDS} done (load ${os.loadavg().map((n) => n.toFixed(1)).join(' ')})`);
    }
  } finally {
    for (const server of servers) await server.close();
  }
  return servers[0].scenarios.map(({ name }) => {
    const of = (mode: TracingMode) => {
      const list = runs.get(`${name}|${mode}`) ?? [];
      return {
        cpu_us_per_request: Math.round(median(list.map((r) => r.cpuUs))),
        cpu_us_by_round: list.map((r) => Math.round(r.cpuUs)),
        rps: Math.round(median(list.map((r) => r.rps))),
        ...(PROFILE ? { profile: profileOf(shares.get(`${name}|${mode}`) ?? []) } : {}),
        p99_ms: Math.round(median(list.map((r) => r.p99)) * 10) / 10,
        non_200: list.reduce((n, r) => n + r.non200, 0),
      };
    };
    const off = of('off');
    // Per round, each mode against off in the same round: the overhead's median over rounds.
    const pairs = (mode: TracingMode) => {
      const offs = runs.get(`${name}|off`) ?? [];
      return (runs.get(`${name}|${mode}`) ?? []).map((r, i) => r.cpuUs / offs[i].cpuUs - 1);
    };
    const others = MODES.filter((mode) => mode !== 'off');
    const overhead = Object.fromEntries(others.map((mode) => [mode, { pct: pct(median(pairs(mode))), quartiles: quartiles(pairs(mode)).map(pct), by_round: pairs(mode).map(pct), rps_change_pct: pct(of(mode).rps / off.rps - 1) }]));
    const line = {
      database: db,
      scenario: name,
      order: MODES,
      ...Object.fromEntries(MODES.map((mode) => [mode.replaceAll('-', '_'), of(mode)])),
      cpu_overhead_vs_off: overhead,
      ...(MODES.includes('on') ? { goal_met: median(pairs('on')) <= GOAL_CPU_OVERHEAD && off.non_200 + of('on').non_200 === 0 } : {}),
    };
    const signed = (n: number) => `${n >= 0 ? '+' : ''}${n}`;
    const figures = others.map((mode) => `${mode} ${of(mode).cpu_us_per_request} µs (${signed(overhead[mode].pct)} %, quartiles ${overhead[mode].quartiles.join(' / ')} %)`);
    console.log(`${db.padEnd(8)} ${name.padEnd(42)} CPU/request off ${off.cpu_us_per_request} µs · ${figures.join(' · ')} | rps ${MODES.map((mode) => of(mode).rps).join(' / ')}`);
    if (PROFILE) {
      const share = (mode: TracingMode) => `${mode} ${of(mode).profile?.tracing_code_percent} % (GC ${of(mode).profile?.gc_percent} %)`;
      console.log(`${''.padEnd(51)} CPU inside tracing code, profiled: ${MODES.map(share).join(' · ')}`);
    }
    return line;
  });
}

async function main() {
  const started = Date.now();
  const sink = await startOtlpSink();
  const results: unknown[] = [];
  const skipped: string[] = [];
  const only = process.env.BENCH_TRACING_ONLY;
  const loadBefore = os.loadavg();
  if (only !== 'postgres') results.push(...(await measure('pglite', sink.url)));
  if (only !== 'pglite') {
    const probe = await openBenchPostgres('tracing_probe');
    if ('skipped' in probe) skipped.push(probe.skipped);
    else {
      await probe.drop();
      results.push(...(await measure('postgres', sink.url)));
    }
  }
  for (const loader of loaders) loader.kill();
  const traced = MODES.some((mode) => mode.startsWith('on'));
  if (traced && sink.bytes() === 0) throw new Error('no span reached the sink: tracing was not on');
  const report = {
    benchmark: 'tracing',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version, load_before: loadBefore, load_after: os.loadavg() },
    setup: { simultaneous: SIMULTANEOUS, connections: SIMULTANEOUS ? Math.ceil(CONNECTIONS / MODES.length) : CONNECTIONS, warmup_ms: WARMUP_MS, duration_ms: DURATION_MS, rounds: ROUNDS, modes: MODES, rate_per_second_per_server: RATE ?? null, goal: `tracing on (default) ≤ ${GOAL_CPU_OVERHEAD * 100} % CPU per request` },
    otlp_bytes_received: sink.bytes(),
    results,
    ...(skipped.length > 0 ? { postgres_skipped: skipped[0] } : {}),
    seconds: Math.round((Date.now() - started) / 1000),
  };
  await sink.close();
  const out = path.join(here, 'results', 'tracing.json');
  fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`written ${path.relative(process.cwd(), out)} in ${report.seconds} s`);
}

await main();
