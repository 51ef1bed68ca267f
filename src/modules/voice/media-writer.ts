import type { Socket } from 'node:net';
import type { Worker } from 'node:worker_threads';
import { monotonicMs, startModuleWorker } from '../../platform/module-worker.ts';
import { ChannelState, OpCode, RING_WRAP, type WriterBatch, type WriterReport, type WriterStats } from './media-writer-protocol.ts';

// The outgoing side of the built-in media sockets, written by a thread of its own
// (media-writer-thread.ts): the event loop hands over each agent frame ahead of its time, with the
// time it is due, and the thread writes it then. The event loop keeps the socket: it reads the
// caller's audio, answers the WebSocket handshake and closing, and owns the descriptor's life.
//
// What crosses over is batched: everything handed over in one task of the event loop (a beat's
// frames for every call, a clear and its message) goes in one message at the end of the task;
// the messages' bytes go through a ring in shared memory, allocated once (fresh memory costs a
// page fault per 4 KB, which here is as dear as the system calls saved).
//
// The descriptor is closed by the socket's own handle. Its close is wrapped: it first marks the
// channel CLOSED in the shared state array, waiting if the thread is in the middle of a write
// (one system call), so the thread never writes to a descriptor number after it was closed.
// Only plain TCP sockets are taken (a TLS socket's bytes must pass through its cipher).

/** The end of a socket's channel to the thread, as the media socket stream uses it. */
export interface MediaWriterChannel {
  /** A binary message, written `delayMs` from now (0 or less: at once). */
  sendBinary(bytes: Uint8Array, delayMs: number): void;
  /** A text message, written at once. */
  sendText(text: string): void;
  /** Drops the binary messages not yet written. */
  dropQueued(): void;
  /** Resolves once the thread writes nothing more to the socket (messages handed over before are written). */
  release(): Promise<void>;
  /** Nothing is written any more: the peer stopped reading past the bound, or the thread stopped. */
  readonly failed: boolean;
}

export interface MediaWriter {
  /** Takes over writing to `socket`; null when it cannot (not plain TCP, no free channel, thread stopped). */
  attach(socket: Socket, options: { maxBufferedBytes: number }): MediaWriterChannel | null;
  /** Channels attached now. */
  readonly channels: number;
  /** Starts the thread now rather than with the first socket (it takes a few hundred ms to load). */
  start(): void;
  /** Frames written since the last call and how late (null while the thread is not running). */
  stats(): Promise<WriterStats | null>;
  close(): Promise<void>;
}

export interface MediaWriterOptions {
  /** Channels at once (default 4,096). */
  maxChannels?: number;
  /** The thread's wake-up grid in ms (default 2): a frame leaves at most this long after it is due. */
  tickMs?: number;
  /** Bytes in flight to the thread at most (default 8 MiB: about 0.8 s of 300 calls' audio); past it a channel fails. */
  ringBytes?: number;
  onError(error: Error): void;
}

/** A close that finds the thread mid-write waits at most this long (a non-blocking write takes microseconds). */
const FENCE_LIMIT_MS = 1000;

/** A channel with its state, as the writer keeps it (the channel handed out is this object). */
interface Attached extends MediaWriterChannel {
  slot: number;
  failed: boolean;
  released: Promise<void> | null;
  settle: (() => void) | null;
  /** The thread let go of the slot (it may be another socket's now). */
  detached: boolean;
}

interface SocketHandle {
  fd?: number;
  close?: (...args: unknown[]) => unknown;
  /** resetAndDestroy(): an RST, then the descriptor closes as with close(). */
  reset?: (...args: unknown[]) => unknown;
}

export function createMediaWriter(options: MediaWriterOptions): MediaWriter {
  const maxChannels = options.maxChannels ?? 4096;
  const tickMs = options.tickMs ?? 2;
  const states = new Int32Array(new SharedArrayBuffer(maxChannels * Int32Array.BYTES_PER_ELEMENT));
  const freeSlots = Array.from({ length: maxChannels }, (_, i) => maxChannels - 1 - i);
  const bySlot = new Map<number, Attached>();
  let worker: Worker | null = null;
  let stopped = false;

  const ringBytes = options.ringBytes ?? 8 * 1024 * 1024;
  const ring = new Uint8Array(new SharedArrayBuffer(ringBytes));
  /** [0]: how far the thread has read the ring, modulo RING_WRAP. */
  const progress = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  /** Bytes put in the ring since the start (gaps left at its end included). */
  let produced = 0;
  let ops: number[] = [];
  let flushQueued = false;
  const statsWaiters: Array<(stats: WriterStats | null) => void> = [];

  function start(): Worker {
    const started = startModuleWorker(new URL('./media-writer-thread.ts', import.meta.url), {
      workerData: { states: states.buffer, ring: ring.buffer, progress: progress.buffer, tickMs },
    });
    started.unref();
    started.on('message', (report: WriterReport) => {
      if (report.type === 'released') detach(report.slot);
      else if (report.type === 'stats') statsWaiters.shift()?.({ frames: report.frames, arrivedLate: report.arrivedLate, lateness: report.lateness });
      else if (report.type === 'overflow') {
        const channel = bySlot.get(report.slot);
        if (channel) channel.failed = true;
      }
    });
    started.on('error', (error) => options.onError(error));
    started.on('exit', () => {
      if (worker !== started) return;
      worker = null;
      stopped = true;
      for (const waiter of statsWaiters.splice(0)) waiter(null);
      // Nothing will be written or answered any more: every channel fails, every release settles.
      for (const slot of [...bySlot.keys()]) {
        const channel = bySlot.get(slot);
        if (channel) channel.failed = true;
        detach(slot);
      }
    });
    return started;
  }

  function detach(slot: number) {
    const channel = bySlot.get(slot);
    if (!channel) return;
    bySlot.delete(slot);
    channel.detached = true;
    channel.settle?.();
    Atomics.store(states, slot, ChannelState.Free);
    freeSlots.push(slot);
  }

  function flush() {
    flushQueued = false;
    if (ops.length === 0 || !worker) return;
    const batch: WriterBatch = { ops: Float64Array.from(ops), ringEnd: produced % RING_WRAP };
    ops = [];
    worker.postMessage(batch, [batch.ops.buffer as ArrayBuffer]);
  }

  function push(op: number, slot: number, a = 0, b = 0, c = 0) {
    ops.push(op, slot, a, b, c);
    if (!flushQueued) {
      flushQueued = true;
      // At the end of this task: a beat's frames for every call go in one message, and a frame due
      // now leaves at once (waiting for the end of the loop's turn delayed frames by a whole poll phase).
      queueMicrotask(flush);
    }
  }

  /** Copies bytes into the ring; their offset there, or -1 when the thread is that far behind. */
  function addData(bytes: Uint8Array): number {
    let offset = produced % ringBytes;
    // A message never wraps: the end of the ring is skipped when it does not fit there.
    const gap = offset + bytes.length > ringBytes ? ringBytes - offset : 0;
    const inFlight = (((produced % RING_WRAP) - Atomics.load(progress, 0)) % RING_WRAP + RING_WRAP) % RING_WRAP;
    if (inFlight + gap + bytes.length > ringBytes) return -1;
    if (gap > 0) offset = 0;
    ring.set(bytes, offset);
    produced += gap + bytes.length;
    return offset;
  }

  /** Before the descriptor closes: the thread must not be writing to it, nor write to it after. */
  function fence(channel: Attached) {
    if (channel.detached) return;
    const started = performance.now();
    for (;;) {
      const previous = Atomics.compareExchange(states, channel.slot, ChannelState.Open, ChannelState.Closed);
      if (previous !== ChannelState.Writing) return;
      if (stopped || performance.now() - started > FENCE_LIMIT_MS) {
        Atomics.store(states, channel.slot, ChannelState.Closed);
        return;
      }
      Atomics.wait(states, channel.slot, ChannelState.Writing, 1);
    }
  }

  return {
    attach(socket, { maxBufferedBytes }) {
      const handle = (socket as unknown as { _handle?: SocketHandle })._handle;
      const close = handle?.close;
      if (stopped || 'encrypted' in socket || !handle || typeof handle.fd !== 'number' || handle.fd < 0 || typeof close !== 'function') return null;
      const slot = freeSlots.pop();
      if (slot === undefined) return null;
      worker ??= start();
      const channel: Attached = {
        slot,
        failed: false,
        released: null,
        settle: null,
        detached: false,
        sendBinary(bytes, delayMs) {
          if (channel.released || channel.failed) return;
          const offset = addData(bytes);
          if (offset < 0) channel.failed = true;
          else push(OpCode.Binary, slot, offset, bytes.length, monotonicMs() + Math.max(0, delayMs));
        },
        sendText(text) {
          if (channel.released || channel.failed) return;
          const bytes = Buffer.from(text);
          const offset = addData(bytes);
          if (offset < 0) channel.failed = true;
          else push(OpCode.Text, slot, offset, bytes.length);
        },
        dropQueued() {
          if (!channel.released) push(OpCode.Drop, slot);
        },
        release() {
          if (channel.released) return channel.released;
          channel.released = channel.detached ? Promise.resolve() : new Promise<void>((resolve) => (channel.settle = resolve));
          if (!channel.detached) push(OpCode.Release, slot);
          return channel.released;
        },
      };
      bySlot.set(slot, channel);
      Atomics.store(states, slot, ChannelState.Open);
      push(OpCode.Open, slot, handle.fd, maxBufferedBytes);
      // Both ways the handle closes its descriptor wait for the thread first.
      const closing = (original: (...args: unknown[]) => unknown) =>
        function closeAfterTheWriter(this: unknown, ...args: unknown[]) {
          fence(channel);
          void channel.release();
          return original.apply(this, args);
        };
      handle.close = closing(close);
      if (typeof handle.reset === 'function') handle.reset = closing(handle.reset);
      return channel;
    },
    get channels() {
      return bySlot.size;
    },
    start() {
      if (!stopped) worker ??= start();
    },
    stats() {
      const running = worker;
      if (!running) return Promise.resolve(null);
      return new Promise((resolve) => {
        statsWaiters.push(resolve);
        running.postMessage({ type: 'stats' });
      });
    },
    async close() {
      stopped = true;
      const running = worker;
      if (running) await running.terminate();
    },
  };
}

