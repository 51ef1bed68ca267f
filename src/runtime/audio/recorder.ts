import { msToSamples, SAMPLE_RATE } from '../../platform/audio/frames.ts';

// The call recording: both sides mixed into one mono track, on the call's timeline (ms since the
// answer). Nothing on the frame path touches fresh memory, which costs a page fault per 4 KB here
// (about 20 µs each on a virtual machine; 300 calls record 4,800 pages a second):
// - the caller's frames are copied into blocks of 10 s taken from a pool every recorder of the
//   process shares, given back when the recording has been taken (`release`);
// - the agent's frames are kept by reference (its speech is synthesised audio that outlives the
//   frame: a frame must not be changed once handed over), consecutive frames of one buffer as one run.
// The two are mixed, with clipping, when the recording is taken. Memory grows as the call goes,
// never beyond its maximum duration.

export const BLOCK_SAMPLES = SAMPLE_RATE * 10;
/** Free blocks the pool keeps for the next calls (about 40 MB); beyond that they are left to the GC. */
const MAX_POOLED_BLOCKS = 128;
const pool: Int16Array[] = [];

/** A zeroed block: from the pool when it has one. */
function takeBlock(): Int16Array {
  const block = pool.pop();
  if (!block) return new Int16Array(BLOCK_SAMPLES);
  block.fill(0);
  return block;
}

export interface CallRecorder {
  addCaller(atMs: number, frame: Int16Array): void;
  /** Kept by reference: `frame` must not change afterwards. */
  addAgent(atMs: number, frame: Int16Array): void;
  /** Milliseconds recorded (up to the last written sample). */
  durationMs(): number;
  /** The mixed track up to the last written sample. */
  pcm(): Int16Array;
  /** Samples recorded: the whole timeline, and the caller's side alone (it moves with the call's time). */
  samples(): { end: number; caller: number };
  /**
   * A copy of one side's 10 s block `index` (samples index·10 s onwards, at most up to the last
   * written sample): the raw tracks written while the call goes on (DESIGN part 9). Mixing the
   * two sides block by block gives what pcm() gives.
   */
  trackBlock(track: 'caller' | 'agent', index: number): Int16Array;
  /** Gives the caller's blocks back to the pool; the recorder is empty afterwards. */
  release(): void;
}

/** Adds `agent` into `out` with clipping (the recorder's mix). */
export function mixInto(out: Int16Array, agent: Int16Array): void {
  const length = Math.min(out.length, agent.length);
  for (let i = 0; i < length; i++) {
    const value = out[i] + agent[i];
    out[i] = value > 32767 ? 32767 : value < -32768 ? -32768 : value;
  }
}

/** A run of agent audio: `length` samples of `buffer` from `byteOffset`, at sample `start` of the call. */
interface AgentRun {
  start: number;
  buffer: ArrayBufferLike;
  byteOffset: number;
  length: number;
}

export function createCallRecorder(options: { maxDurationMs: number }): CallRecorder {
  const maxSamples = msToSamples(options.maxDurationMs);
  let blocks: Int16Array[] = [];
  let callerEnd = 0;
  let runs: AgentRun[] = [];
  let agentEnd = 0;
  const end = () => Math.max(callerEnd, agentEnd);

  return {
    addCaller(atMs, frame) {
      const start = msToSamples(atMs);
      if (start < 0 || start >= maxSamples) return;
      const length = Math.min(frame.length, maxSamples - start);
      let done = 0;
      // Block by block: a frame crosses at most one block boundary.
      while (done < length) {
        const at = start + done;
        const index = Math.floor(at / BLOCK_SAMPLES);
        while (blocks.length <= index) blocks.push(takeBlock());
        const offset = at - index * BLOCK_SAMPLES;
        const count = Math.min(length - done, BLOCK_SAMPLES - offset);
        blocks[index].set(count === frame.length ? frame : frame.subarray(done, done + count), offset);
        done += count;
      }
      callerEnd = Math.max(callerEnd, start + length);
    },
    addAgent(atMs, frame) {
      const start = msToSamples(atMs);
      if (start < 0 || start >= maxSamples) return;
      const length = Math.min(frame.length, maxSamples - start);
      const last = runs.at(-1);
      // The next frame of the same audio, right after the last one on the timeline: the run grows.
      if (last && last.buffer === frame.buffer && last.start + last.length === start && last.byteOffset + last.length * 2 === frame.byteOffset) {
        last.length += length;
      } else {
        runs.push({ start, buffer: frame.buffer, byteOffset: frame.byteOffset, length });
      }
      agentEnd = Math.max(agentEnd, start + length);
    },
    durationMs: () => (end() * 1000) / SAMPLE_RATE,
    pcm() {
      const out = new Int16Array(end());
      for (let index = 0; index < blocks.length; index++) {
        const base = index * BLOCK_SAMPLES;
        if (base < out.length) out.set(blocks[index].subarray(0, Math.min(BLOCK_SAMPLES, out.length - base)), base);
      }
      if (runs.length === 0) return out;
      // The agent's side on a track of its own (a later run overwrites an earlier one where they
      // overlap, as audio handed ahead and dropped at a barge-in is replaced), then summed.
      const agent = new Int16Array(agentEnd);
      for (const run of runs) agent.set(new Int16Array(run.buffer, run.byteOffset, run.length), run.start);
      mixInto(out, agent);
      return out;
    },
    samples: () => ({ end: end(), caller: callerEnd }),
    trackBlock(track, index) {
      const base = index * BLOCK_SAMPLES;
      const out = new Int16Array(Math.max(0, Math.min(BLOCK_SAMPLES, end() - base)));
      if (track === 'caller') {
        if (index < blocks.length) out.set(blocks[index].subarray(0, out.length));
        return out;
      }
      for (const run of runs) {
        const from = Math.max(run.start, base);
        const to = Math.min(run.start + run.length, base + out.length);
        if (from >= to) continue;
        const offset = run.byteOffset + (from - run.start) * 2;
        out.set(new Int16Array(run.buffer, offset, to - from), from - base);
      }
      return out;
    },
    release() {
      for (const block of blocks) if (pool.length < MAX_POOLED_BLOCKS) pool.push(block);
      blocks = [];
      runs = [];
      callerEnd = 0;
      agentEnd = 0;
    },
  };
}
