// The clients of the media benchmark (bench/media.bench.ts), in a worker thread of their own: in a
// deployment they are browsers and apps on other machines, and their work must not share the
// platform's event loop. Each holds one built-in media WebSocket (GET /v1/media/stream?token=),
// sends a 640-byte frame of low-level noise every 20 ms (all clients paced by one shared timer,
// each on a phase of its own within the 20 ms) and a typed turn every few seconds so the agent
// keeps talking, and times the agent's audio frames as they arrive. Driven by messages from
// bench/media.bench.ts.
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import WebSocket, { type RawData } from 'ws';
import { prng } from '../prng.ts';

export interface MediaClientsSettings {
  /** ws://host:port/v1/media/stream */
  url: string;
  /** A typed turn from each client this often (phases spread evenly over the clients). */
  textEveryMs: number;
  text: string;
  /** Run the clients' thread at a raised priority (as the media writer's). */
  raisedPriority?: boolean;
}

export type MediaClientsRequest =
  | { type: 'open'; tokens: string[]; staggerMs: number; timeoutMs: number }
  | { type: 'measure'; ms: number }
  | { type: 'await-closed'; timeoutMs: number }
  | { type: 'close' };

export interface OpenResult {
  type: 'opened';
  connected: number;
  greeted: number;
  failures: string[];
  /** From the socket's open to the first greeting frame. */
  first_frame_p50_ms: number | null;
  first_frame_max_ms: number | null;
}

export interface MeasureResult {
  type: 'measured';
  seconds: number;
  open_sockets: number;
  frames_in: number;
  frames_out: number;
  texts_sent: number;
  clears: number;
  gaps: number;
  /** Gaps above 200 ms: turn boundaries (not counted as jitter). */
  turn_gaps: number;
  jitter_p50_ms: number | null;
  jitter_p99_ms: number | null;
  jitter_max_ms: number | null;
  /** Share of in-turn gaps more than 20 ms off (a frame 40 ms late or bunched with the next). */
  late_share: number | null;
  loop_delay_p99_ms: number;
  loop_delay_max_ms: number;
  /** Share of the window the clients' event loop was busy. */
  loop_utilization: number;
}

export interface ClosedResult {
  type: 'closed';
  still_open: number;
  end_messages: number;
  end_reasons: Record<string, number>;
}

// As in bench/media.bench.ts: Node 20's monitorEventLoopDelay counts the resolution in each sample.
const LOOP_RESOLUTION_MS = 10;
const loopDelayMs = (nanoseconds: number) => Math.max(0, Math.round((nanoseconds / 1e6 - LOOP_RESOLUTION_MS) * 10) / 10);
const FRAME_MS = 20;
const FRAME_BYTES = 640;
const TURN_GAP_MS = 200;

const settings = workerData as MediaClientsSettings;
const port = parentPort;
if (!port) throw new Error('media-clients runs as a worker thread');

// The clients, which in a deployment run on machines of their own, get the same raised priority
// as the server's media writer thread (unless BENCH_CLIENTS_PRIORITY=normal), so that their own
// scheduling delays on the two shared cores (they time each frame as their event loop sees it)
// weigh less in the jitter they measure. Raising needs root or CAP_SYS_NICE; without it, nothing changes.
if (settings.raisedPriority) {
  try {
    os.setPriority(0, os.getPriority(0) - 10);
  } catch {
    // Not allowed: the clients run at the process's priority.
  }
}

// Low-level noise (about -50 dBFS), which the VAD does not take for speech: a few frames, cycled.
const random = prng(16);
const noise = Array.from({ length: 8 }, () => {
  const samples = Int16Array.from({ length: FRAME_BYTES / 2 }, () => Math.round((random() - 0.5) * 200));
  return Buffer.from(samples.buffer);
});
const textMessage = JSON.stringify({ type: 'text', text: settings.text });

interface Client {
  socket: WebSocket;
  /** Arrival of the previous agent frame of the current turn (null at a turn's start). */
  lastFrameAt: number | null;
  openedAt: number;
  firstFrameAt: number | null;
  nextTextAt: number;
  ended: string | null;
}

let clients: Client[] = [];
// What the current window has seen.
let jitters: number[] = [];
let stats = { framesIn: 0, framesOut: 0, textsSent: 0, clears: 0, turnGaps: 0 };
const resetStats = () => {
  jitters = [];
  stats = { framesIn: 0, framesOut: 0, textsSent: 0, clears: 0, turnGaps: 0 };
};

function onMessage(client: Client, data: RawData, isBinary: boolean) {
  const now = performance.now();
  if (isBinary) {
    stats.framesIn++;
    if (client.firstFrameAt === null) client.firstFrameAt = now;
    if (client.lastFrameAt !== null) {
      const gap = now - client.lastFrameAt;
      if (gap > TURN_GAP_MS) stats.turnGaps++;
      else jitters.push(Math.abs(gap - FRAME_MS));
    }
    client.lastFrameAt = now;
    return;
  }
  const message = JSON.parse(data.toString()) as { type?: string; role?: string; reason?: string };
  // A new agent turn starts after a barge-in (clear) or once the user's turn is taken (its transcript line).
  if (message.type === 'clear') {
    stats.clears++;
    client.lastFrameAt = null;
  } else if (message.type === 'transcript' && message.role === 'user') {
    client.lastFrameAt = null;
  } else if (message.type === 'end') {
    client.ended = message.reason ?? 'unknown';
  }
}

// One timer for every client. Real clients are not in step: each sends on a phase of its own, so
// the 20 ms period is cut into PHASES slots and client i sends in slot i % PHASES. Each tick (one
// slot) sends its clients' frames; a late tick sends the slots it missed.
const PHASES = 10;
const SLOT_MS = FRAME_MS / PHASES;
let slotIndex = 0;
let pacerStart = 0;
let pacer: NodeJS.Timeout | null = null;
function tick() {
  const now = performance.now();
  const due = Math.floor((now - pacerStart) / SLOT_MS);
  // Late by more than 5 frames (a stalled loop): skip ahead rather than burst.
  if (due - slotIndex > 5 * PHASES) slotIndex = due - 5 * PHASES;
  for (; slotIndex <= due; slotIndex++) {
    const phase = slotIndex % PHASES;
    const frame = noise[Math.floor(slotIndex / PHASES) % noise.length];
    for (let i = phase; i < clients.length; i += PHASES) {
      const client = clients[i];
      if (client.socket.readyState !== WebSocket.OPEN) continue;
      client.socket.send(frame, { binary: true });
      stats.framesOut++;
    }
  }
  for (const client of clients) {
    if (now < client.nextTextAt || client.socket.readyState !== WebSocket.OPEN) continue;
    client.socket.send(textMessage);
    client.nextTextAt += settings.textEveryMs;
    stats.textsSent++;
  }
  pacer = setTimeout(tick, Math.max(0, pacerStart + slotIndex * SLOT_MS - performance.now()));
}

function openOne(token: string, phaseMs: number): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${settings.url}?token=${encodeURIComponent(token)}`, { perMessageDeflate: false });
    const client: Client = { socket, lastFrameAt: null, openedAt: 0, firstFrameAt: null, nextTextAt: Number.POSITIVE_INFINITY, ended: null };
    socket.on('message', (data, isBinary) => onMessage(client, data, isBinary));
    socket.once('open', () => {
      client.openedAt = performance.now();
      client.nextTextAt = client.openedAt + phaseMs;
      resolve(client);
    });
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
  });
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? null : sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]);
const round1 = (value: number | null) => (value === null ? null : Math.round(value * 10) / 10);

async function open(request: Extract<MediaClientsRequest, { type: 'open' }>): Promise<OpenResult> {
  clients = [];
  const failures: string[] = [];
  const n = request.tokens.length;
  if (pacer === null) {
    pacerStart = performance.now();
    slotIndex = 0;
    tick();
  }
  for (let i = 0; i < n; i++) {
    // Typed turns at evenly spread phases, the first after the greeting has begun.
    const phase = 2000 + (settings.textEveryMs * i) / n;
    try {
      clients.push(await openOne(request.tokens[i], phase));
    } catch (error) {
      failures.push(String(error));
    }
    // Sessions arrive one after another, not in the same millisecond.
    await new Promise((resolve) => setTimeout(resolve, request.staggerMs));
  }
  const deadline = performance.now() + request.timeoutMs;
  while (clients.some((c) => c.firstFrameAt === null && c.socket.readyState === WebSocket.OPEN) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const firsts = clients.filter((c) => c.firstFrameAt !== null).map((c) => (c.firstFrameAt as number) - c.openedAt);
  firsts.sort((a, b) => a - b);
  return {
    type: 'opened',
    connected: clients.length,
    greeted: firsts.length,
    failures,
    first_frame_p50_ms: round1(percentile(firsts, 50)),
    first_frame_max_ms: round1(firsts.length > 0 ? firsts[firsts.length - 1] : null),
  };
}

async function measure(ms: number): Promise<MeasureResult> {
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  const elu = performance.eventLoopUtilization();
  resetStats();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const seconds = (performance.now() - started) / 1000;
  loop.disable();
  const busy = performance.eventLoopUtilization(elu);
  const sorted = jitters.sort((a, b) => a - b);
  return {
    type: 'measured',
    seconds: Math.round(seconds * 10) / 10,
    open_sockets: clients.filter((c) => c.socket.readyState === WebSocket.OPEN).length,
    frames_in: stats.framesIn,
    frames_out: stats.framesOut,
    texts_sent: stats.textsSent,
    clears: stats.clears,
    gaps: sorted.length,
    turn_gaps: stats.turnGaps,
    jitter_p50_ms: round1(percentile(sorted, 50)),
    jitter_p99_ms: round1(percentile(sorted, 99)),
    jitter_max_ms: round1(sorted.length > 0 ? sorted[sorted.length - 1] : null),
    late_share: sorted.length === 0 ? null : Math.round((sorted.filter((j) => j > FRAME_MS).length / sorted.length) * 10_000) / 10_000,
    loop_delay_p99_ms: loopDelayMs(loop.percentile(99)),
    loop_delay_max_ms: loopDelayMs(loop.max),
    loop_utilization: Math.round(busy.utilization * 1000) / 1000,
  };
}

async function awaitClosed(timeoutMs: number): Promise<ClosedResult> {
  const deadline = performance.now() + timeoutMs;
  while (clients.some((c) => c.socket.readyState !== WebSocket.CLOSED) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const reasons: Record<string, number> = {};
  for (const c of clients) if (c.ended) reasons[c.ended] = (reasons[c.ended] ?? 0) + 1;
  const result: ClosedResult = {
    type: 'closed',
    still_open: clients.filter((c) => c.socket.readyState !== WebSocket.CLOSED).length,
    end_messages: clients.filter((c) => c.ended).length,
    end_reasons: reasons,
  };
  for (const c of clients) c.socket.terminate();
  clients = [];
  return result;
}

port.on('message', async (request: MediaClientsRequest) => {
  if (request.type === 'open') port.postMessage(await open(request));
  else if (request.type === 'measure') port.postMessage(await measure(request.ms));
  else if (request.type === 'await-closed') port.postMessage(await awaitClosed(request.timeoutMs));
  else {
    if (pacer) clearTimeout(pacer);
    pacer = null;
    for (const c of clients) c.socket.terminate();
    port.postMessage({ type: 'bye' });
  }
});

port.postMessage({ type: 'ready' });
