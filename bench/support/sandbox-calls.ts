import fs from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { type CallJson, callSignature, decodedMs } from '../../test/support/recordings.ts';
import { prng } from '../prng.ts';
import { benchDataDir, buildBenchApp } from './bench-app.ts';

// Sandbox calls through the real app under load (issue 26), the second part of `npm run bench -- calls`.
// One process: buildApp on PGlite in a temp DATA_DIR with the dialer and the post-call job running as
// src/server.ts starts them, SANDBOX_SPEED 20 (BENCH_SANDBOX_SPEED), and a process spinning on
// one core for the whole measurement (the machine's other users aside). Calls are placed and hung up
// through the API (app.inject); their status and recording_status are read from the calls table by one
// query every POLL_MS (READY_POLL_MS once all are terminal) for all calls of the level, so the
// measuring costs the calls little.
//  1. the baseline: one scripted call alone; then N at once (BENCH_CALL_LEVELS): completed, differing
//     from the baseline (transcript with times, duration, cost, latency), recordings missing or not
//     decoding to duration_ms ± 40 ms, wall time until every recording is ready;
//  2. hang-up → terminal: BENCH_HANGUP_CALLS live calls, each hung up at a random point while
//     in_progress, wall ms from the hang-up's response to the terminal status;
//  3. terminal → recording ready (from every level of 1; the goal is judged at 100). A level waits at
//     most BENCH_RECORDING_WAIT_MS (240 s) for its recordings: those not ready by then count as lost
//     (recordings_not_ready_within_bound says how many of the lost were merely late).

const LEVELS = (process.env.BENCH_CALL_LEVELS ?? '25,50,100').split(',').map(Number);
const HANGUP_CALLS = Number(process.env.BENCH_HANGUP_CALLS ?? 50);
const SPEED = process.env.BENCH_SANDBOX_SPEED ?? '20';
const POLL_MS = 25;
/** Once every watched call is terminal: the recordings' waits are seconds long, and a query every 25 ms on the same event loop (PGlite runs there) took a quarter of the post-call CPU. */
const READY_POLL_MS = 250;
const RECORDING_WAIT_MS = Number(process.env.BENCH_RECORDING_WAIT_MS ?? 240_000);
const TERMINAL = new Set(['completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled']);
const SCRIPT = ['Hi, what time do you open tomorrow?', { text: 'Sorry, are you open on Sunday too?', interrupt_after_ms: 1200 }, 'Great, thank you. Goodbye!'];
const LATENCY = { stt_ms: 300, llm_first_token_ms: 700, tts_first_audio_ms: 250 };
// Long enough to be hung up in the middle: about a minute of call time.
const LONG_SCRIPT = Array.from({ length: 12 }, (_, i) => ['Hi, what time do you open tomorrow?', 'Do you have a table for four?', 'Can I bring my dog?'][i % 3]);

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const signature = (call: CallJson) => JSON.stringify(callSignature(call));

async function start() {
  const dataDir = benchDataDir('sandbox');
  const { app, platform, modules: { calls }, database } = await buildBenchApp(dataDir, { SANDBOX_SPEED: SPEED, CALLS_PER_PROCESS: String(Math.max(...LEVELS, HANGUP_CALLS)) });
  await app.ready();
  await calls.worker.start();
  await calls.postCall.start();
  const request = async (method: 'GET' | 'POST', url: string, token?: string, payload?: unknown) => {
    const res = await app.inject({ method, url, payload: payload as object, headers: token ? { authorization: `Bearer ${token}` } : {} });
    if (res.statusCode >= 400) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res;
  };
  await request('POST', '/v1/auth/register', undefined, { email: 'bench@example.com', password: 'bench password' });
  const token = (await request('POST', '/v1/auth/login', undefined, { email: 'bench@example.com', password: 'bench password' })).json().access_token as string;
  const agent = (
    await request('POST', '/v1/agents', token, {
      name: 'Ada',
      prompt: 'You are Ada, the receptionist of a bistro.',
      first_message: 'Hello, this is Ada from the bistro. How can I help?',
      silence_timeout_seconds: 600,
    })
  ).json() as { id: string };
  const db = platform.db;
  const { workspace_id: workspaceId } = await db.selectFrom('agents').select('workspace_id').where('id', '=', agent.id).executeTakeFirstOrThrow();
  const close = async () => {
    await calls.worker.stop();
    await calls.postCall.stop();
    await app.close();
    await database.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { request, token, agentId: agent.id, db, workspaceId, close };
}
type Bench = Awaited<ReturnType<typeof start>>;

/** Watches calls' status and recording_status, one query per POLL_MS (READY_POLL_MS once all are terminal): the wall time each first became terminal and ready. */
function watch(b: Bench, ids: string[]) {
  const seen = new Map(ids.map((id) => [id, { status: 'queued', inProgressAt: null as number | null, terminalAt: null as number | null, readyAt: null as number | null, recording: 'pending' }]));
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const rows = await b.db.selectFrom('calls').select(['id', 'status', 'recording_status']).where('id', 'in', ids).execute();
      const now = performance.now();
      for (const row of rows) {
        const s = seen.get(row.id);
        if (!s) continue;
        s.status = row.status;
        s.recording = row.recording_status ?? 'none';
        if (row.status === 'in_progress' && s.inProgressAt === null) s.inProgressAt = now;
        if (TERMINAL.has(row.status) && s.terminalAt === null) s.terminalAt = now;
        if (TERMINAL.has(row.status) && row.recording_status !== 'pending' && s.readyAt === null) s.readyAt = now;
      }
      await sleep([...seen.values()].every((s) => s.terminalAt !== null) ? READY_POLL_MS : POLL_MS);
    }
  })();
  return {
    seen,
    async until(done: () => boolean, timeoutMs: number) {
      const deadline = performance.now() + timeoutMs;
      while (!done() && performance.now() < deadline) await sleep(POLL_MS);
      stopped = true;
      await loop;
    },
  };
}

async function place(b: Bench, count: number, script: unknown[]) {
  await b.db.updateTable('workspaces').set({ max_concurrent_calls: count }).where('id', '=', b.workspaceId).execute();
  const placed = await Promise.all(
    Array.from({ length: count }, () => b.request('POST', '/v1/calls/outbound', b.token, { agent_id: b.agentId, to: '+15550100200', simulation: { caller_script: script, latency: LATENCY } })),
  );
  return placed.map((res) => res.json().id as string);
}

/** N identical scripted calls at once, compared with `expected` (the lone call's signature, or null to make it). */
async function runLevel(b: Bench, count: number, expected: string | null) {
  const loadStart = os.loadavg()[0];
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  const ids = await place(b, count, SCRIPT);
  const watcher = watch(b, ids);
  let cpuAtLastTerminal: NodeJS.CpuUsage | null = null;
  await watcher.until(() => {
    const states = [...watcher.seen.values()];
    if (cpuAtLastTerminal === null && states.length === ids.length && states.every((s) => s.terminalAt !== null)) cpuAtLastTerminal = process.cpuUsage();
    return states.every((s) => s.readyAt !== null);
  }, RECORDING_WAIT_MS);
  const wallMs = Math.round(performance.now() - started);
  const cpuEnd = process.cpuUsage();
  const cpuMs = (from: NodeJS.CpuUsage | null) => (from === null ? null : Math.round((cpuEnd.user - from.user + cpuEnd.system - from.system) / 1000));
  let completed = 0;
  let differ = 0;
  let lost = 0;
  let notReady = 0;
  let first: CallJson | null = null;
  const recordingWaits: number[] = [];
  const terminalMs: number[] = [];
  for (const id of ids) {
    const s = watcher.seen.get(id);
    if (s?.terminalAt != null) terminalMs.push(s.terminalAt - started);
    if (s?.terminalAt != null && s.readyAt != null) recordingWaits.push(s.readyAt - s.terminalAt);
    const call = (await b.request('GET', `/v1/calls/${id}`, b.token)).json() as CallJson;
    first ??= call;
    if (call.status === 'completed') completed++;
    if (expected !== null && signature(call) !== expected) differ++;
    if (s?.readyAt == null) notReady++;
    const res = await b.request('GET', `/v1/calls/${id}/recording.mp3`, b.token).catch(() => null);
    if (res?.statusCode !== 200 || Math.abs((await decodedMs(res.rawPayload)) - call.duration_ms) > 40) lost++;
  }
  const postCall = await b.db.selectFrom('calls').select(['recording_status', 'post_call_attempts']).where('id', 'in', ids).execute();
  return {
    level: {
      calls: count,
      completed,
      differ_from_baseline: expected === null ? null : differ,
      recordings_lost: lost,
      recordings_not_ready_within_bound: notReady,
      recordings_failed: postCall.filter((r) => r.recording_status === 'failed').length,
      post_call_attempts_max: Math.max(...postCall.map((r) => r.post_call_attempts)),
      load_average_1m: [Math.round(loadStart * 100) / 100, Math.round(os.loadavg()[0] * 100) / 100],
      wall_ms_all_recordings_ready: wallMs,
      // This process's CPU time (all its threads; the hog is another process): the level's whole
      // work, and the part after the last call ended (post-call work, the bench's polling).
      cpu_ms_level: cpuMs(cpuStart),
      cpu_ms_after_last_terminal: cpuMs(cpuAtLastTerminal),
      wall_ms_all_terminal: percentile(terminalMs, 100),
      terminal_to_recording_ready_p50_ms: percentile(recordingWaits, 50),
      terminal_to_recording_ready_p99_ms: percentile(recordingWaits, 99),
      terminal_to_recording_ready_max_ms: percentile(recordingWaits, 100),
    },
    first: first as CallJson,
  };
}

/** `count` long calls, each hung up at a random point while in progress: wall ms from the hang-up's answer to the terminal status. */
async function hangups(b: Bench, count: number) {
  const random = prng(26);
  const ids = await place(b, count, LONG_SCRIPT);
  const watcher = watch(b, ids);
  const answeredAt = new Map<string, number>();
  const alreadyTerminal: string[] = [];
  let notInProgress = 0;
  await Promise.all(
    ids.map(async (id) => {
      const deadline = performance.now() + 120_000;
      while ((watcher.seen.get(id)?.inProgressAt ?? null) === null && performance.now() < deadline) await sleep(POLL_MS);
      // A random point of the conversation: up to 2 s of wall time (40 s of call time at speed 20).
      await sleep(random() * 2000);
      if (watcher.seen.get(id)?.status !== 'in_progress') {
        notInProgress++;
        return;
      }
      const res = await b.request('POST', `/v1/calls/${id}/hangup`, b.token);
      answeredAt.set(id, performance.now());
      if (TERMINAL.has(res.json().status)) alreadyTerminal.push(id);
    }),
  );
  await watcher.until(() => [...answeredAt.keys()].every((id) => watcher.seen.get(id)?.terminalAt != null), 60_000);
  const waits = [...answeredAt].map(([id, at]) => (alreadyTerminal.includes(id) ? 0 : Math.max(0, (watcher.seen.get(id)?.terminalAt ?? Infinity) - at)));
  // Let their post-call work finish before the next measurement.
  const after = watch(b, ids);
  await after.until(() => [...after.seen.values()].every((s) => s.readyAt !== null), 240_000);
  const endReasons: Record<string, number> = {};
  for (const row of await b.db.selectFrom('calls').select('end_reason').where('id', 'in', ids).execute()) endReasons[row.end_reason ?? 'null'] = (endReasons[row.end_reason ?? 'null'] ?? 0) + 1;
  return {
    calls: count,
    hung_up: answeredAt.size,
    not_in_progress_at_hangup_time: notInProgress,
    terminal_in_hangup_response: alreadyTerminal.length,
    never_terminal: waits.filter((w) => !Number.isFinite(w)).length,
    hangup_to_terminal_p50_ms: percentile(waits.filter(Number.isFinite), 50),
    hangup_to_terminal_p99_ms: percentile(waits.filter(Number.isFinite), 99),
    hangup_to_terminal_max_ms: percentile(waits.filter(Number.isFinite), 100),
    poll_resolution_ms: POLL_MS,
    recording_poll_resolution_ms: READY_POLL_MS,
    end_reasons: endReasons,
  };
}

/**
 * A process spinning until killed: one core taken for the whole measurement. A process rather
 * than a thread of this one, so this process's CPU time (`cpu_ms_*`) is the platform's alone.
 */
function hogOneCore() {
  const hog = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  return () => hog.kill('SIGKILL');
}

export async function measureSandboxCalls() {
  const loadStart = os.loadavg();
  const stopHog = hogOneCore();
  const b = await start();
  try {
    const lone = await runLevel(b, 1, null);
    const expected = signature(lone.first);
    console.log(JSON.stringify({ baseline: lone.level }));
    const levels = [];
    for (const count of LEVELS) {
      const { level } = await runLevel(b, count, expected);
      console.log(JSON.stringify(level));
      levels.push(level);
    }
    const hangup = await hangups(b, HANGUP_CALLS);
    console.log(JSON.stringify({ hangup }));
    const good = levels.filter((l) => l.completed === l.calls && l.differ_from_baseline === 0 && l.recordings_lost === 0);
    const at100 = levels.find((l) => l.calls === 100) ?? null;
    return {
      sandbox_speed: SPEED,
      cpu_hog: 'one process spinning for the whole part',
      load_average_start: loadStart.map((x) => Math.round(x * 100) / 100),
      load_average_end: os.loadavg().map((x) => Math.round(x * 100) / 100),
      baseline: {
        ...lone.level,
        call: { status: lone.first.status, end_reason: lone.first.end_reason, duration_ms: lone.first.duration_ms, cost_usd: lone.first.cost_usd, latency: lone.first.latency, transcript: lone.first.transcript },
      },
      levels,
      most_concurrent_identical_none_lost: good.length > 0 ? Math.max(...good.map((l) => l.calls)) : 0,
      hangup,
      goal_hangup_to_terminal_p99_ms: 1000,
      recording_ready_at_100: at100 && { p50_ms: at100.terminal_to_recording_ready_p50_ms, p99_ms: at100.terminal_to_recording_ready_p99_ms },
      goal_recording_ready_p99_ms: 30_000,
    };
  } finally {
    await b.close();
    await stopHog();
  }
}
