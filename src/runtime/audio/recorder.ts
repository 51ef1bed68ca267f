import { msToSamples, SAMPLE_RATE } from '../../platform/audio/frames.ts';
import { decodeMulawInto, MULAW_SILENCE, MULAW_STEP } from '../../platform/audio/mulaw.ts';

// The call recording: both sides mixed into one mono track, on the call's timeline (ms since the
// answer). Nothing on the frame path touches fresh memory, which costs a page fault per 4 KB here
// (about 20 µs each on a virtual machine; 300 calls record 4,800 pages a second):
// - the caller's frames are copied into blocks of 10 s taken from a pool every recorder of the
//   process shares, given back when the recording has been taken (`release`);
// - the agent's frames are kept by reference (its speech is synthesised audio that outlives the
//   frame: a frame must not be changed once handed over), consecutive frames of one buffer as one run.
// The two are mixed, with clipping, when the recording is taken. Memory grows as the call goes,
// never beyond its maximum duration.
// A call whose audio stays the carrier's μ-law 8 kHz (a speech model taking it as it comes) is
// recorded in it: the caller's bytes copied into μ-law blocks of their own (a pool as well), the
// agent's kept by reference; both decoded to PCM16 16 kHz when the recording is taken, never on
// the frame path.

export const BLOCK_SAMPLES = SAMPLE_RATE * 10;
/** Free blocks the pool keeps for the next calls (about 40 MB); beyond that they are left to the GC. */
const MAX_POOLED_BLOCKS = 128;
const pool: Int16Array[] = [];
const mulawPool: Uint8Array[] = [];

/** A zeroed block: from the pool when it has one. */
function takeBlock(): Int16Array {
  const block = pool.pop();
  if (!block) return new Int16Array(BLOCK_SAMPLES);
  block.fill(0);
  return block;
}

/** A silent μ-law block (10 s at 8 kHz): from its pool when it has one. */
function takeMulawBlock(): Uint8Array {
  const block = mulawPool.pop() ?? new Uint8Array(BLOCK_SAMPLES / MULAW_STEP);
  return block.fill(MULAW_SILENCE);
}

export interface CallRecorder {
  addCaller(atMs: number, frame: Int16Array): void;
  /** Kept by reference: `frame` must not change afterwards. */
  addAgent(atMs: number, frame: Int16Array): void;
  /** The caller's μ-law 8 kHz (copied; decoded when the recording is taken). */
  addCallerMulaw(atMs: number, mulaw: Uint8Array): void;
  /** The agent's μ-law 8 kHz, kept by reference as `addAgent`'s frames are. */
  addAgentMulaw(atMs: number, frame: Uint8Array): void;
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

/**
 * A run of agent audio: `length` samples (16 kHz) at sample `start` of the call, from `byteOffset`
 * of `buffer`: PCM16, or μ-law 8 kHz (one byte per MULAW_STEP samples).
 */
interface AgentRun {
  start: number;
  buffer: ArrayBufferLike;
  byteOffset: number;
  length: number;
  mulaw: boolean;
}

/** Bytes of `buffer` a run takes per sample of the timeline. */
const bytesPerSample = (run: AgentRun) => (run.mulaw ? 1 / MULAW_STEP : 2);

/** Samples `from`..`to` of the call (within the run) as PCM16 16 kHz, into `out` at `at`. */
function runInto(run: AgentRun, from: number, to: number, out: Int16Array, at: number) {
  if (!run.mulaw) return out.set(new Int16Array(run.buffer, run.byteOffset + (from - run.start) * 2, to - from), at);
  // Whole bytes around the range (a range starts and ends on frame boundaries: even samples).
  const first = Math.floor((from - run.start) / MULAW_STEP);
  const end = Math.ceil((to - run.start) / MULAW_STEP);
  const bytes = new Uint8Array(run.buffer, run.byteOffset + first, end - first);
  const pcm = new Int16Array(bytes.length * MULAW_STEP);
  const runBytes = run.length / MULAW_STEP;
  decodeMulawInto(bytes, pcm, 0, end < runBytes ? new Uint8Array(run.buffer, run.byteOffset + end, 1)[0] : undefined);
  out.set(pcm.subarray(from - run.start - first * MULAW_STEP, to - run.start - first * MULAW_STEP), at);
}

export function createCallRecorder(options: { maxDurationMs: number }): CallRecorder {
  const maxSamples = msToSamples(options.maxDurationMs);
  let blocks: Int16Array[] = [];
  let mulawBlocks: Uint8Array[] = [];
  let callerEnd = 0;
  let runs: AgentRun[] = [];
  let agentEnd = 0;
  const end = () => Math.max(callerEnd, agentEnd);

  /** Copies `audio` (its elements at `step` samples each) into a side's 10 s blocks from sample `start`. */
  function intoBlocks<A extends Int16Array | Uint8Array>(list: A[], take: () => A, start: number, audio: A, step: number) {
    const perBlock = BLOCK_SAMPLES / step;
    const first = Math.floor(start / step);
    const count = Math.min(audio.length, Math.ceil((maxSamples - start) / step));
    let done = 0;
    // Block by block: a frame crosses at most one block boundary.
    while (done < count) {
      const at = first + done;
      const index = Math.floor(at / perBlock);
      while (list.length <= index) list.push(take());
      const offset = at - index * perBlock;
      const n = Math.min(count - done, perBlock - offset);
      list[index].set(n === audio.length ? audio : audio.subarray(done, done + n), offset);
      done += n;
    }
    callerEnd = Math.max(callerEnd, start + count * step);
  }

  /** The caller's side of block `index` as PCM16 (the μ-law decoded, added to any PCM). */
  function callerBlock(index: number): Int16Array | undefined {
    const pcm = blocks[index];
    const mulaw = mulawBlocks[index];
    if (!mulaw) return pcm;
    const decoded = new Int16Array(BLOCK_SAMPLES);
    decodeMulawInto(mulaw, decoded, 0, mulawBlocks[index + 1]?.[0]);
    if (pcm) mixInto(decoded, pcm);
    return decoded;
  }

  function addRun(start: number, frame: Int16Array | Uint8Array, length: number, mulaw: boolean) {
    const last = runs.at(-1);
    // The next frame of the same audio, right after the last one on the timeline: the run grows.
    if (last && last.mulaw === mulaw && last.buffer === frame.buffer && last.start + last.length === start && last.byteOffset + last.length * bytesPerSample(last) === frame.byteOffset) {
      last.length += length;
    } else {
      runs.push({ start, buffer: frame.buffer, byteOffset: frame.byteOffset, length, mulaw });
    }
    agentEnd = Math.max(agentEnd, start + length);
  }

  return {
    addCaller(atMs, frame) {
      const start = msToSamples(atMs);
      if (start >= 0 && start < maxSamples) intoBlocks(blocks, takeBlock, start, frame, 1);
    },
    addCallerMulaw(atMs, mulaw) {
      // On the μ-law's own grid (two samples a byte).
      const start = msToSamples(atMs) & ~1;
      if (start >= 0 && start < maxSamples) intoBlocks(mulawBlocks, takeMulawBlock, start, mulaw, MULAW_STEP);
    },
    addAgent(atMs, frame) {
      const start = msToSamples(atMs);
      if (start >= 0 && start < maxSamples) addRun(start, frame, Math.min(frame.length, maxSamples - start), false);
    },
    addAgentMulaw(atMs, frame) {
      const start = msToSamples(atMs) & ~1;
      if (start >= 0 && start < maxSamples) addRun(start, frame, Math.min(frame.length, (maxSamples - start) >> 1) * MULAW_STEP, true);
    },
    durationMs: () => (end() * 1000) / SAMPLE_RATE,
    pcm() {
      const out = new Int16Array(end());
      for (let index = 0; index < Math.max(blocks.length, mulawBlocks.length); index++) {
        const base = index * BLOCK_SAMPLES;
        const block = callerBlock(index);
        if (block && base < out.length) out.set(block.subarray(0, Math.min(BLOCK_SAMPLES, out.length - base)), base);
      }
      if (runs.length === 0) return out;
      // The agent's side on a track of its own (a later run overwrites an earlier one where they
      // overlap, as audio handed ahead and dropped at a barge-in is replaced), then summed.
      const agent = new Int16Array(agentEnd);
      for (const run of runs) runInto(run, run.start, run.start + run.length, agent, run.start);
      mixInto(out, agent);
      return out;
    },
    samples: () => ({ end: end(), caller: callerEnd }),
    trackBlock(track, index) {
      const base = index * BLOCK_SAMPLES;
      const out = new Int16Array(Math.max(0, Math.min(BLOCK_SAMPLES, end() - base)));
      if (track === 'caller') {
        const block = callerBlock(index);
        if (block) out.set(block.subarray(0, out.length));
        return out;
      }
      for (const run of runs) {
        const from = Math.max(run.start, base);
        const to = Math.min(run.start + run.length, base + out.length);
        if (from < to) runInto(run, from, to, out, from - base);
      }
      return out;
    },
    release() {
      for (const block of blocks) if (pool.length < MAX_POOLED_BLOCKS) pool.push(block);
      for (const block of mulawBlocks) if (mulawPool.length < MAX_POOLED_BLOCKS) mulawPool.push(block);
      blocks = [];
      mulawBlocks = [];
      runs = [];
      callerEnd = 0;
      agentEnd = 0;
    },
  };
}
