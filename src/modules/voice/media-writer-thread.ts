import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import * as ws from 'ws';
import { monotonicMs } from '../../platform/module-worker.ts';
import { ChannelState, OP_FIELDS, OpCode, type WriterBatch, type WriterOp, type WriterReport, type WriterStatsRequest } from './media-writer-protocol.ts';

// The media writer's thread (media-writer.ts is its other half, on the event loop). It writes the
// outgoing WebSocket messages of the built-in media sockets straight to their file descriptors,
// each binary frame at its due time on the process's monotonic clock. Writes to a socket are
// system calls that cost 10-20 µs each here; 300 sessions send 15,000 frames a second. Done here,
// they cost the event loop nothing, and audio keeps its 20 ms cadence through the event loop's
// pauses (a garbage collection, a burst of requests) as long as frames were handed over ahead.
//
// The descriptor stays owned by the event loop's socket. Before each write this thread moves the
// channel's shared state from OPEN to WRITING and back; the socket's close waits for WRITING to
// end and sets CLOSED first (media-writer.ts), so a descriptor is never written after it closed
// (its number could already name another file).

const port = parentPort;
if (!port) throw new Error('media-writer-thread runs as a worker thread');
const shared = workerData as { states: SharedArrayBuffer; ring: SharedArrayBuffer; progress: SharedArrayBuffer; tickMs: number };
const states = new Int32Array(shared.states);
const ring = Buffer.from(shared.ring);
const progress = new Int32Array(shared.progress);
const { tickMs } = shared;

// Frames must leave on time even when the event loop and everything else keep the cores busy:
// this thread asks for a higher priority than the process's (on Linux, pid 0 names the calling
// thread). It needs the right to raise priorities (root or CAP_SYS_NICE); without it, nothing changes.
try {
  os.setPriority(0, os.getPriority(0) - 10);
} catch {
  // Not allowed here: the thread runs at the process's priority.
}
/** A pending write is retried this often while the peer's buffers are full. */
const RETRY_MS = 20;

/** Frames written, by how many ms after their time (the last bucket: that or later); reset when read. */
const lateness = new Array<number>(101).fill(0);
let framesWritten = 0;
/** Frames that reached this thread more than 5 ms after their time (the event loop was later than the lead). */
let arrivedLate = 0;

interface Timed {
  due: number;
  message: Buffer;
}

interface Channel {
  slot: number;
  fd: number;
  maxBuffered: number;
  /** Binary frames waiting for their due time, in order. */
  queue: Timed[];
  /** Bytes the socket did not take yet (a partial write and what followed it), in order. */
  pending: Buffer[];
  pendingBytes: number;
  /** Nothing more is written: the socket failed, closed, or its peer stopped reading. */
  done: boolean;
}

const channels = new Map<number, Channel>();
let timer: NodeJS.Timeout | null = null;

// ws frames messages with Sender.frame (exported by ws, not declared by @types/ws).
const { Sender } = ws as unknown as {
  Sender: { frame(data: Buffer, options: { fin: boolean; rsv1: boolean; opcode: number; mask: boolean; readOnly: boolean }): Buffer[] };
};
/**
 * A whole unmasked message, as a server sends it, in one buffer (one write(2) of one buffer costs
 * less than a writev of two), its payload copied out of the ring.
 */
function messageOf(offset: number, length: number, opcode: 1 | 2): Buffer {
  const payload = ring.subarray(offset, offset + length);
  const [header] = Sender.frame(payload, { fin: true, rsv1: false, opcode, mask: false, readOnly: true });
  const message = Buffer.allocUnsafe(header.length + length);
  header.copy(message, 0);
  payload.copy(message, header.length);
  return message;
}

function report(message: WriterReport) {
  port?.postMessage(message);
}

/** One write system call; the bytes taken, or -1 when the socket is gone. */
function writeOnce(channel: Channel, buffers: Buffer[]): number {
  if (Atomics.compareExchange(states, channel.slot, ChannelState.Open, ChannelState.Writing) !== ChannelState.Open) return -1;
  try {
    return buffers.length === 1 ? fs.writeSync(channel.fd, buffers[0]) : fs.writevSync(channel.fd, buffers);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EAGAIN' ? 0 : -1;
  } finally {
    Atomics.store(states, channel.slot, ChannelState.Open);
    Atomics.notify(states, channel.slot);
  }
}

function stop(channel: Channel) {
  channel.done = true;
  channel.queue = [];
  channel.pending = [];
  channel.pendingBytes = 0;
}

/** Keeps what the socket did not take, in order; past the bound the peer is too slow: cut off. */
function keep(channel: Channel, buffers: Buffer[], written: number) {
  let skip = written;
  for (const buffer of buffers) {
    if (skip >= buffer.length) {
      skip -= buffer.length;
      continue;
    }
    const rest = skip > 0 ? buffer.subarray(skip) : buffer;
    skip = 0;
    channel.pending.push(rest);
    channel.pendingBytes += rest.length;
  }
  if (channel.pendingBytes > channel.maxBuffered) {
    stop(channel);
    report({ type: 'overflow', slot: channel.slot });
  }
}

function write(channel: Channel, message: Buffer) {
  if (channel.done) return;
  if (channel.pending.length > 0) return keep(channel, [message], 0);
  const written = writeOnce(channel, [message]);
  if (written < 0) return stop(channel);
  if (written < message.length) keep(channel, [message], written);
}

function flushPending(channel: Channel) {
  if (channel.done || channel.pending.length === 0) return;
  const buffers = channel.pending;
  channel.pending = [];
  channel.pendingBytes = 0;
  const written = writeOnce(channel, buffers);
  if (written < 0) return stop(channel);
  keep(channel, buffers, written);
}

/** Writes a channel's unsent bytes and its frames due by `now`, in order. */
function writeDue(channel: Channel, now: number) {
  flushPending(channel);
  const { queue } = channel;
  let taken = 0;
  while (taken < queue.length && queue[taken].due <= now) {
    const frame = queue[taken++];
    write(channel, frame.message);
    lateness[Math.min(lateness.length - 1, Math.floor(now - frame.due))]++;
    framesWritten++;
  }
  if (taken > 0) queue.splice(0, taken);
}

/** Writes what is due on every channel, then sleeps until the next due frame (on a `tickMs` grid). */
function tick() {
  timer = null;
  const now = monotonicMs();
  let next = Number.POSITIVE_INFINITY;
  for (const channel of channels.values()) {
    writeDue(channel, now);
    const { queue } = channel;
    if (channel.done) continue;
    if (queue.length > 0) next = Math.min(next, queue[0].due);
    if (channel.pending.length > 0) next = Math.min(next, now + RETRY_MS);
  }
  if (next === Number.POSITIVE_INFINITY) return;
  // Wake-ups on a grid: hundreds of channels whose frames fall due at scattered times cost one
  // wake-up per tick, and each channel's frames keep their 20 ms spacing (20 is a multiple of the tick).
  const at = Math.ceil(next / tickMs) * tickMs;
  timer = setTimeout(tick, Math.max(0, at - monotonicMs()));
}

function apply(op: WriterOp, slot: number, a: number, b: number, c: number) {
  switch (op) {
    case OpCode.Open:
      channels.set(slot, { slot, fd: a, maxBuffered: b, queue: [], pending: [], pendingBytes: 0, done: false });
      return;
    case OpCode.Release: {
      const channel = channels.get(slot);
      // What was due goes out (the last words, the `end` message, were written before); frames
      // for later and what the socket still refuses are dropped.
      if (channel) writeDue(channel, monotonicMs());
      channels.delete(slot);
      report({ type: 'released', slot });
      return;
    }
  }
  const channel = channels.get(slot);
  if (!channel || channel.done) return;
  // Messages are copied out of the ring as they arrive: the event loop reuses its space once read.
  if (op === OpCode.Binary) {
    if (c < monotonicMs() - 5) arrivedLate++;
    channel.queue.push({ due: c, message: messageOf(a, b, 2) });
  }
  // Text goes out at once, after the frames already due (a `clear` right after the audio it drops).
  else if (op === OpCode.Text) {
    writeDue(channel, monotonicMs());
    write(channel, messageOf(a, b, 1));
  }
  else if (op === OpCode.Drop) channel.queue = [];
}

port.on('message', (batch: WriterBatch | WriterStatsRequest) => {
  if ('type' in batch) {
    report({ type: 'stats', frames: framesWritten, arrivedLate, lateness: [...lateness] });
    lateness.fill(0);
    framesWritten = 0;
    arrivedLate = 0;
    return;
  }
  const { ops } = batch;
  for (let i = 0; i < ops.length; i += OP_FIELDS) apply(ops[i] as WriterOp, ops[i + 1], ops[i + 2], ops[i + 3], ops[i + 4]);
  Atomics.store(progress, 0, batch.ringEnd);
  // Frames due now (the first of a reply) leave at once; the rest wait for their tick.
  if (timer) {
    clearTimeout(timer);
    timer = null;
  }
  tick();
});

report({ type: 'ready' });
