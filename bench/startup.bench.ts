// Start-up benchmark: `npm start` as a child process (node --import tsx src/server.ts, the
// package's start script) until its first `GET /openapi.json` answers 200, measured from the spawn.
// Cases, interleaved round by round so that a neighbour's burst of load hits them alike:
//   bare            the baseline: a bare `node` process starting a Fastify server that answers one
//                   route (bench/support/startup-bare-server.mjs), on the same machine, same moment
//   pglite_fresh    a new DATA_DIR (the embedded database created, every migration run)
//   pglite_warm     the same DATA_DIR started again
//   pglite_first    a new DATA_DIR and an empty tsx cache (TMPDIR of its own): the very first
//                   `npm start` after `npm ci`, every TypeScript file compiled
//   postgres_fresh  a new PostgreSQL database (every migration run), when PostgreSQL answers
//   postgres_warm   the same database started again
//   before_pglite_fresh, before_pglite_warm
//                   with BENCH_STARTUP_BEFORE_ROOT=<another checkout, its own npm ci>: that
//                   checkout's server, fresh and warm, in the same rounds (what a change moved)
// Each start logs its phases at debug (src/platform/startup-phases.ts); their medians per case are
// in the JSON beside the wall times. Writes bench/results/startup.json.
//   npm run bench -- startup      BENCH_STARTUP_RUNS (default 5) runs per case;
//                                 BENCH_STARTUP_CASES=pglite_fresh,bare to run some cases only
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { STARTUP_LOG_MESSAGE } from '../src/platform/startup-phases.ts';
import { freePort } from '../test/support/ports.ts';
import { benchPostgresUrl } from './support/postgres.ts';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 5);
const GOAL_MS = 10_000;
const START_TIMEOUT_MS = 180_000;
const root = path.resolve(import.meta.dirname, '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bench-startup-'));

const CASES = ['bare', 'pglite_fresh', 'pglite_warm', 'pglite_first', 'postgres_fresh', 'postgres_warm', 'before_pglite_fresh', 'before_pglite_warm'] as const;
const beforeRoot = process.env.BENCH_STARTUP_BEFORE_ROOT ? path.resolve(process.env.BENCH_STARTUP_BEFORE_ROOT) : undefined;
type CaseName = (typeof CASES)[number];
const only = process.env.BENCH_STARTUP_CASES?.split(',').map((s) => s.trim());
const wanted = (name: CaseName) => !only || only.includes(name);

interface Run {
  ms: number;
  /** The child's CPU time (user + system, every thread) when its first 200 arrived. */
  cpu_ms: number;
  phases?: Record<string, number>;
  phases_cpu?: Record<string, number>;
  listening_ms?: number;
  pglite_template?: boolean;
}

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
/** A process's CPU ms so far, from /proc (Linux). */
function cpuOf(pid: number | undefined): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const load = () => os.loadavg().map((n) => Math.round(n * 100) / 100);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round1 = (n: number) => Math.round(n * 10) / 10;

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Spawns `args` with `env`, polls GET /openapi.json every 10 ms until 200; then waits for the phase line. */
async function startOnce(args: string[], env: Record<string, string | undefined>, withPhases: boolean, cwd = root): Promise<Run> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let phaseLine: { phases: Record<string, number>; phases_cpu: Record<string, number>; listening_ms: number; pglite_template: boolean } | undefined;
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    if (!phaseLine && withPhases && output.includes(STARTUP_LOG_MESSAGE)) {
      for (const line of output.split('\n')) {
        if (!line.includes(STARTUP_LOG_MESSAGE)) continue;
        try {
          phaseLine = JSON.parse(line);
        } catch {
          // A partial line: the rest comes with the next chunk.
        }
      }
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  try {
    let ms = 0;
    let cpu = 0;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}):\n${output.slice(-3000)}`);
      if (performance.now() - started > START_TIMEOUT_MS) throw new Error(`no /openapi.json within ${START_TIMEOUT_MS} ms:\n${output.slice(-3000)}`);
      const response = await fetch(`http://127.0.0.1:${port}/openapi.json`).catch(() => undefined);
      if (response?.status === 200) {
        const body = (await response.json()) as { openapi?: string };
        ms = performance.now() - started;
        cpu = cpuOf(child.pid);
        if (!body.openapi) throw new Error('/openapi.json answered without an openapi field');
        break;
      }
      await response?.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (withPhases) {
      const deadline = performance.now() + 30_000;
      while (!phaseLine && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      if (!phaseLine) throw new Error(`no "${STARTUP_LOG_MESSAGE}" line in the log:\n${output.slice(-3000)}`);
    }
    return {
      ms: round1(ms),
      cpu_ms: round1(cpu),
      ...(phaseLine ? { phases: phaseLine.phases, phases_cpu: phaseLine.phases_cpu, listening_ms: phaseLine.listening_ms, pglite_template: phaseLine.pglite_template } : {}),
    };
  } finally {
    await stop(child);
  }
}

const baseEnv = (): Record<string, string | undefined> => {
  const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'debug', LOG_FORMAT: 'json' };
  // As `npm start` on a fresh checkout: no PostgreSQL, no Redis unless a case sets one.
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  return env;
};
const product = ['--import', 'tsx', 'src/server.ts'];

async function postgresReachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

async function adminQuery(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const pgUrl = benchPostgresUrl();
const pgSkipped = wanted('postgres_fresh') || wanted('postgres_warm') ? await postgresReachable(pgUrl) : 'not asked';
const runs = Object.fromEntries(CASES.map((c) => [c, [] as Run[]])) as Record<CaseName, Run[]>;
const loadAtStart = { loadavg: load(), uptime: uptime() };
const benchStarted = performance.now();

try {
  for (let round = 1; round <= RUNS; round++) {
    if (wanted('bare')) runs.bare.push(await startOnce([path.join(import.meta.dirname, 'support/startup-bare-server.mjs')], baseEnv(), false));
    if (wanted('pglite_fresh') || wanted('pglite_warm')) {
      const dataDir = path.join(work, `data-${round}`);
      const fresh = await startOnce(product, { ...baseEnv(), DATA_DIR: dataDir }, true);
      if (wanted('pglite_fresh')) runs.pglite_fresh.push(fresh);
      if (wanted('pglite_warm')) runs.pglite_warm.push(await startOnce(product, { ...baseEnv(), DATA_DIR: dataDir }, true));
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    if (beforeRoot && (wanted('before_pglite_fresh') || wanted('before_pglite_warm'))) {
      // That checkout may not log its phases: wall time only.
      const dataDir = path.join(work, `before-${round}`);
      const fresh = await startOnce(product, { ...baseEnv(), DATA_DIR: dataDir }, false, beforeRoot);
      if (wanted('before_pglite_fresh')) runs.before_pglite_fresh.push(fresh);
      if (wanted('before_pglite_warm')) runs.before_pglite_warm.push(await startOnce(product, { ...baseEnv(), DATA_DIR: dataDir }, false, beforeRoot));
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    if (wanted('pglite_first')) {
      const dataDir = path.join(work, `first-${round}`);
      const tmp = path.join(work, `tmp-${round}`);
      fs.mkdirSync(tmp);
      runs.pglite_first.push(await startOnce(product, { ...baseEnv(), DATA_DIR: dataDir, TMPDIR: tmp }, true));
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    if (!pgSkipped) {
      const name = `bench_startup_${randomBytes(4).toString('hex')}`;
      await adminQuery(pgUrl, `CREATE DATABASE ${name}`);
      const url = new URL(pgUrl);
      url.pathname = `/${name}`;
      try {
        const env = { ...baseEnv(), DATA_DIR: path.join(work, `pg-${round}`), DATABASE_URL: url.toString() };
        const fresh = await startOnce(product, env, true);
        if (wanted('postgres_fresh')) runs.postgres_fresh.push(fresh);
        if (wanted('postgres_warm')) runs.postgres_warm.push(await startOnce(product, env, true));
      } finally {
        await adminQuery(pgUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    }
    console.log(
      `round ${round}: ${CASES.filter((c) => runs[c].length >= round)
        .map((c) => `${c} ${runs[c][round - 1].ms} ms`)
        .join(' · ')} (load ${load().join(' ')})`,
    );
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}

function summary(list: Run[]) {
  if (list.length === 0) return null;
  const phaseNames = [...new Set(list.flatMap((r) => Object.keys(r.phases ?? {})))];
  const withPhases = list.filter((r) => r.phases);
  return {
    runs: list.length,
    median_ms: round1(median(list.map((r) => r.ms))),
    max_ms: round1(Math.max(...list.map((r) => r.ms))),
    min_ms: round1(Math.min(...list.map((r) => r.ms))),
    all_ms: list.map((r) => r.ms),
    cpu_median_ms: round1(median(list.map((r) => r.cpu_ms))),
    ...(withPhases.length > 0
      ? {
          listening_median_ms: round1(median(withPhases.map((r) => r.listening_ms ?? 0))),
          phases_median_ms: Object.fromEntries(phaseNames.map((name) => [name, round1(median(withPhases.map((r) => r.phases?.[name] ?? 0)))])),
          phases_max_ms: Object.fromEntries(phaseNames.map((name) => [name, round1(Math.max(...withPhases.map((r) => r.phases?.[name] ?? 0)))])),
          phases_cpu_median_ms: Object.fromEntries(
            phaseNames.filter((name) => withPhases.some((r) => r.phases_cpu?.[name] !== undefined)).map((name) => [name, round1(median(withPhases.map((r) => r.phases_cpu?.[name] ?? 0)))]),
          ),
          from_pglite_template: withPhases.filter((r) => r.pglite_template).length,
        }
      : {}),
  };
}

const results = Object.fromEntries(CASES.map((c) => [c, summary(runs[c])]));
const bare = results.bare?.median_ms;
const fresh = results.pglite_fresh?.median_ms;
const out = {
  benchmark: 'start-up: node --import tsx src/server.ts (npm start) spawned → first GET /openapi.json 200',
  measured_at: new Date().toISOString(),
  machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, platform: `${os.platform()} ${os.release()}` },
  load: { at_start: loadAtStart, at_end: { loadavg: load(), uptime: uptime() } },
  bench_seconds: round1((performance.now() - benchStarted) / 1000),
  method:
    'Each case spawns the process and polls GET /openapi.json every 10 ms from the spawn; ms is spawn → 200 with the document. cpu_ms: the child\'s CPU time (user + system, all threads, from /proc) at that moment. Phases: the product\'s debug line "start-up phases (ms)", wall ms of each phase (modules = Node\'s start and every module loaded before main; listening_ms = process start → listening). Cases are interleaved round by round. bare: a bare node process starting a Fastify server answering one route, the same way (the machine\'s floor at that moment).',
  goal: { case: 'pglite_fresh', median_ms_at_most: GOAL_MS, met: fresh !== undefined ? fresh <= GOAL_MS : null },
  baseline: { case: 'bare', median_ms: bare ?? null },
  ...(beforeRoot ? { before: { root: beforeRoot, commit: execFileSync('git', ['-C', beforeRoot, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim() } } : {}),
  postgres: pgSkipped ? { skipped: pgSkipped } : { url: pgUrl.replace(/\/\/[^@]*@/, '//…@'), fresh_database_per_round: true },
  results,
};
fs.mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
fs.writeFileSync(path.join(import.meta.dirname, 'results', 'startup.json'), `${JSON.stringify(out, null, 2)}\n`);
for (const c of CASES) {
  const r = results[c];
  if (r) console.log(`${c}: median ${r.median_ms} ms, max ${r.max_ms} ms, CPU ${r.cpu_median_ms} ms${'phases_median_ms' in r ? ` · phases ${JSON.stringify(r.phases_median_ms)}` : ''}`);
}
console.log(`goal (pglite_fresh median ≤ ${GOAL_MS} ms): ${out.goal.met ? 'met' : 'not met'}; load ${loadAtStart.loadavg.join(' ')} → ${out.load.at_end.loadavg.join(' ')}`);
