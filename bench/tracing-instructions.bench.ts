// What tracing costs a request, counted in machine instructions (issue 32). Two cores shared with
// other work make CPU time too noisy to tell 2 % from 5 % (bench/README.md, "Tracing cost");
// valgrind's callgrind counts the instructions a process executes whatever else the machine does.
//
// One process (bench/support/tracing-server.ts with a list of modes) serves one platform app per
// mode — tracing off, a second tracing-off app (the A/A control: what two identical apps differ
// by), tracing on as configured (reads sampled at TRACE_READS_RATIO 0.1, every write traced,
// spans exported over OTLP/HTTP to a sink in this process) — each on its own port and database.
// One process, because two processes running the same code differ by 10-20 % in their counts
// (their JIT and their collector do not take the same decisions at the same moments; measured in
// session 17): in one process the compiled code, the inline caches and the heap are shared, and
// the apps' windows interleave, so a major collection or a recompilation falls on each alike.
//
// After a warm-up, each round counts per request kind one window of N requests per app, in a
// rotating order, one request at a time on one kept-alive connection. A window is counted by
// turning callgrind's instrumentation on and off from outside (callgrind_control) and dumping its
// total; everything the process runs in the window counts: the requests, the timers, the garbage
// collector, V8's compiler threads, and the export of the window's spans. The export timer is set
// to ten minutes (its longest) and each window ends with a flush (one export a window, or more
// when a batch fills): under callgrind a request is some 50 times slower, so a timer-driven export
// would run 50 times as often per request as it does at full speed and its fixed cost be counted
// 50 times over. What is compared is the program's count: the window's total less V8's lumps on
// the side — TurboFan compiling, deoptimising, full collections — which fall in one app's window or
// another at random and swing a window's total by 2-3 times (bench/support/callgrind-split.ts; they
// are reported beside it, per request over the run). The headline figure is a mode's windows
// together against the tracing-off app's, with the per-window median beside it.
// Goal: tracing on costs ≤ 5 % of a request's instructions, on every request kind.
//   npm run bench -- tracing-instructions   BENCH_TRACING_ROUNDS (8), BENCH_TRACING_REQUESTS (200
//   a window), BENCH_TRACING_WARMUP (3000 a kind and app), BENCH_TRACING_DB=postgres (default) |
//   pglite, BENCH_TRACING_MODES (off,off-b,on; any of bench/tracing.bench.ts's modes, off first)
// Needs valgrind (Debian's `valgrind`: callgrind and callgrind_control). Slow: about 20 minutes.
import { execFile, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Pool } from 'undici';
import { type CallgrindSplit, type Side, splitCallgrindDump } from './support/callgrind-split.ts';
import { childReply } from './support/child-reply.ts';
import { startOtlpSink } from './support/otlp-sink.ts';
import type { TracingMode, TracingScenario } from './support/tracing-server.ts';

const ROUNDS = Number(process.env.BENCH_TRACING_ROUNDS ?? 8);
const REQUESTS = Number(process.env.BENCH_TRACING_REQUESTS ?? 200);
const WARMUP = Number(process.env.BENCH_TRACING_WARMUP ?? 3000);
const DB = process.env.BENCH_TRACING_DB ?? 'postgres';
const MODES = (process.env.BENCH_TRACING_MODES ?? 'off,off-b,on').split(',') as TracingMode[];
// BENCH_TRACING_NODE_FLAGS: V8 flags for the counted process; by default one thread (compilation,
// marking and sweeping on the main thread, in the order the requests set them off) and no
// incremental marking (a full collection is then one pause, all of it in the collector's code:
// incremental marking's write barriers run inside the program's code and cannot be told apart).
const NODE_FLAGS = (process.env.BENCH_TRACING_NODE_FLAGS ?? '--single-threaded --no-incremental-marking').split(' ').filter(Boolean);
const GOAL = 0.05;
if (MODES[0] !== 'off' || new Set(MODES).size !== MODES.length) throw new Error('BENCH_TRACING_MODES must start with off and list each mode once');
const here = import.meta.dirname;
const run = promisify(execFile);

type AppInfo = { mode: TracingMode; url: string; scenarios: TracingScenario[] };

/** The platform apps of every mode, in one process under callgrind, its instrumentation off until a window is counted. */
async function startCounted(sink: string, outDir: string) {
  const outFile = path.join(outDir, 'server.out');
  const child = fork(path.join(here, 'support/tracing-server.ts'), {
    execPath: 'valgrind',
    execArgv: ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${outFile}`, '--quiet', process.execPath, ...NODE_FLAGS, '--import', 'tsx'],
    env: { ...process.env, BENCH_TRACING_MODE: MODES.join(','), BENCH_TRACING_DB: DB, BENCH_TRACING_SINK: sink, BENCH_TRACING_EXPORT_DELAY_MS: '600000' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { ready } = await childReply<{ ready: { apps: AppInfo[] } }>(child);
  const pools = ready.apps.map((app) => new Pool(app.url, { connections: 1, pipelining: 1, keepAliveTimeout: 600_000 }));
  const control = async (...args: string[]) => void (await run('callgrind_control', [...args, String(child.pid)]));
  let dumps = 0;
  /** Sends n requests of a kind to the app of mode `m`, one after the other; any answer but 200 is a broken set-up. */
  const send = async (m: number, kind: number, n: number) => {
    const scenario = ready.apps[m].scenarios[kind];
    const body = scenario.body === undefined ? undefined : JSON.stringify(scenario.body);
    const headers = body === undefined ? scenario.headers : { ...scenario.headers, 'content-type': 'application/json' };
    for (let i = 0; i < n; i++) {
      const answer = await pools[m].request({ path: scenario.path, method: scenario.method, body, headers });
      await answer.body.dump();
      if (answer.statusCode !== 200) throw new Error(`${MODES[m]} ${scenario.name}: ${answer.statusCode}`);
    }
  };
  /**
   * What the whole process ran while the app of mode `m` answered n requests of a kind and exported
   * their spans: callgrind's count, split into the program's and V8's lumps on the side.
   */
  const counted = async (m: number, kind: number, n: number) => {
    await control('--instr=on');
    await send(m, kind, n);
    await childReply(child, { type: 'flush' });
    await control('--instr=off');
    await control('--dump');
    dumps += 1;
    return splitCallgrindDump(`${outFile}.${dumps}`);
  };
  const close = async () => {
    for (const pool of pools) await pool.close();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await childReply(child, { type: 'close' });
    await exited; // callgrind writes its last file as the process ends
  };
  return { scenarios: ready.apps[0].scenarios, send, counted, close };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const pct = (ratio: number) => Math.round(ratio * 1000) / 10;

/**
 * The warm-up (every app, every kind, in turns of 100), then per round and kind one counted window
 * per mode, the modes' order rotating: instructions a request, by mode, kind and round.
 */
async function sequence(server: Awaited<ReturnType<typeof startCounted>>) {
  for (let done = 0; done < WARMUP; done += 100) {
    for (const m of MODES.keys()) for (const kind of server.scenarios.keys()) await server.send(m, kind, Math.min(100, WARMUP - done));
  }
  const windows: CallgrindSplit[][][] = MODES.map(() => server.scenarios.map(() => []));
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of server.scenarios.keys()) {
      for (const step of MODES.keys()) {
        const m = (step + round + kind) % MODES.length;
        windows[m][kind].push(await server.counted(m, kind, REQUESTS));
      }
    }
    console.log(`round ${round + 1} of ${ROUNDS} counted (load ${os.loadavg().map((n) => n.toFixed(1)).join(' ')})`);
  }
  return windows;
}

async function main() {
  const started = Date.now();
  await run('valgrind', ['--version']).catch(() => {
    throw new Error('valgrind is not installed (apt-get install -y valgrind)');
  });
  const sink = await startOtlpSink();
  // BENCH_TRACING_DUMPS=<dir>: callgrind's files are kept there (`callgrind_annotate <dir>/on.out.3`
  // shows where a window's instructions went; `server.out.<n>` is the n-th window in the order counted).
  const kept = process.env.BENCH_TRACING_DUMPS;
  if (kept) fs.mkdirSync(kept, { recursive: true });
  const outDir = kept ? path.resolve(kept) : fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bench-callgrind-'));
  const loadBefore = os.loadavg();
  const server = await startCounted(sink.url, outDir);
  let windows: CallgrindSplit[][][];
  try {
    windows = await sequence(server);
  } finally {
    await server.close().catch(() => {});
    if (!kept) fs.rmSync(outDir, { recursive: true, force: true });
  }
  if (MODES.some((mode) => mode.startsWith('on')) && sink.bytes() === 0) throw new Error('no span reached the sink: tracing was not on');
  const perRequest = (values: number[]) => Math.round(sum(values) / values.length / REQUESTS);
  const signed = (value: number) => `${value >= 0 ? '+' : ''}${value} %`;
  const results = server.scenarios.map(({ name }, index) => {
    const off = windows[0][index].map((w) => w.program);
    const byMode = Object.fromEntries(
      MODES.map((mode, m) => {
        const own = windows[m][index];
        const program = own.map((w) => w.program);
        // The program's count window by window against the tracing-off app's window of the same
        // round, then the median; and all windows together (the headline).
        const ratios = program.map((value, round) => value / off[round] - 1);
        const sides = Object.fromEntries((['compile', 'deoptimize', 'full_gc'] as Side[]).map((side) => [side, perRequest(own.map((w) => w.sides[side]))]));
        const figures = {
          instructions_per_request: perRequest(program),
          by_round: program.map((value) => Math.round(value / REQUESTS)),
          vs_off_pct: pct(sum(program) / sum(off) - 1),
          vs_off_window_median_pct: pct(median(ratios)),
          vs_off_by_round_pct: ratios.map(pct),
          // V8's lumps, a request's share over the run: not in the figures above (they fall at random in one app's window or another).
          side_instructions_per_request: sides,
          total_vs_off_pct: pct(sum(own.map((w) => w.total)) / sum(windows[0][index].map((w) => w.total)) - 1),
        };
        return [mode.replaceAll('-', '_'), figures];
      }),
    );
    const on = MODES.includes('on') ? byMode.on.vs_off_pct : null;
    const figures = MODES.slice(1).map((mode) => `${mode} ${signed(byMode[mode.replaceAll('-', '_')].vs_off_pct)} (median window ${signed(byMode[mode.replaceAll('-', '_')].vs_off_window_median_pct)})`);
    console.log(`${DB.padEnd(8)} ${name.padEnd(42)} off ${(byMode.off.instructions_per_request / 1e6).toFixed(2)} M instructions a request · ${figures.join(' · ')}`);
    return { scenario: name, ...byMode, ...(on === null ? {} : { goal_met: on <= GOAL * 100 }) };
  });
  await sink.close();
  const report = {
    benchmark: 'tracing-instructions',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version, load_before: loadBefore, load_after: os.loadavg() },
    setup: { database: DB, modes: MODES, rounds: ROUNDS, requests_per_window: REQUESTS, warmup_per_kind: WARMUP, counted: 'valgrind --tool=callgrind, one process serving every mode, its whole count toggled per window; compared: the program\'s count, less V8\'s compilation, deoptimisation and full collections (bench/support/callgrind-split.ts)', node_flags: NODE_FLAGS, goal: `tracing on (default) ≤ ${GOAL * 100} % instructions per request` },
    otlp_bytes_received: sink.bytes(),
    results,
    seconds: Math.round((Date.now() - started) / 1000),
  };
  const out = path.join(here, 'results', 'tracing-instructions.json');
  fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`written ${path.relative(process.cwd(), out)} in ${report.seconds} s`);
}

await main();
