// What the event loop's half of the media writer (media-writer.ts) and its thread
// (media-writer-thread.ts) say to each other.

/** A channel's state in the shared array, one Int32 per slot. */
export const ChannelState = { Free: 0, Open: 1, Writing: 2, Closed: 3 } as const;

/**
 * The bytes of the messages travel through a ring in shared memory (written by the event loop,
 * copied out by the thread as each batch arrives; the thread then stores how far it has read in
 * `progress[0]`, counted modulo RING_WRAP). A batch is one postMessage of its operations.
 */
export const RING_WRAP = 2 ** 30;

/** Operations in a batch: OP_FIELDS numbers each, [op, slot, a, b, c]. */
export const OpCode = {
  /** a: the socket's file descriptor, b: the bound on unsent bytes. */
  Open: 1,
  /** A binary message: a, b: offset and length in the ring; c: due time (monotonicMs). */
  Binary: 2,
  /** A text message, written at once: a, b: offset and length in the ring. */
  Text: 3,
  /** Drops the binary messages not yet written. */
  Drop: 4,
  /** Writes nothing more; answered by `released`. */
  Release: 5,
} as const;
export type WriterOp = (typeof OpCode)[keyof typeof OpCode];
export const OP_FIELDS = 5;

/** One postMessage: its operations, and the ring position (modulo RING_WRAP) after its bytes. */
export interface WriterBatch {
  ops: Float64Array;
  ringEnd: number;
}

/** Asks the thread for its figures since the last ask. */
export interface WriterStatsRequest {
  type: 'stats';
}

/** Binary frames written since the last ask, and how late: `lateness[i]` frames were written i to i+1 ms after their time (the last bucket: later). */
export interface WriterStats {
  frames: number;
  /** Frames handed over after their time (the event loop was later than the lead). */
  arrivedLate: number;
  lateness: number[];
}

/** From the thread: ready, a channel released (its slot is free again), a peer over its bound, figures asked for. */
export type WriterReport =
  | { type: 'ready' }
  | { type: 'released'; slot: number }
  | { type: 'overflow'; slot: number }
  | ({ type: 'stats' } & WriterStats);
