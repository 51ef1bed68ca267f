import { msToSamples } from './frames.ts';

// The call recording: both sides mixed into one mono track. Each side is written as it goes onto a
// track of its own (each frame copied at its place on the call's timeline, ms since the answer: one
// memcpy on the frame path, no per-sample work); the two are summed with clipping when the
// recording is taken. Memory grows in blocks as the call goes, never beyond its maximum duration.

const BLOCK_SAMPLES = 16_000 * 10;

export interface CallRecorder {
  addCaller(atMs: number, frame: Int16Array): void;
  addAgent(atMs: number, frame: Int16Array): void;
  /** Milliseconds recorded (up to the last written sample). */
  durationMs(): number;
  /** The mixed track up to the last written sample. */
  pcm(): Int16Array;
}

/** One side's audio on the call's timeline, in blocks allocated as it reaches them. */
function createTrack(maxSamples: number) {
  const blocks: Int16Array[] = [];
  let end = 0;
  return {
    write(atMs: number, frame: Int16Array) {
      const start = msToSamples(atMs);
      if (start < 0 || start >= maxSamples) return;
      const length = Math.min(frame.length, maxSamples - start);
      let done = 0;
      // Block by block: a frame crosses at most one block boundary.
      while (done < length) {
        const at = start + done;
        const index = Math.floor(at / BLOCK_SAMPLES);
        while (blocks.length <= index) blocks.push(new Int16Array(BLOCK_SAMPLES));
        const offset = at - index * BLOCK_SAMPLES;
        const count = Math.min(length - done, BLOCK_SAMPLES - offset);
        blocks[index].set(count === frame.length ? frame : frame.subarray(done, done + count), offset);
        done += count;
      }
      end = Math.max(end, start + length);
    },
    get end() {
      return end;
    },
    /** The block holding samples from `index * BLOCK_SAMPLES` (undefined where nothing was written). */
    block: (index: number): Int16Array | undefined => blocks[index],
  };
}

export function createCallRecorder(options: { maxDurationMs: number }): CallRecorder {
  const maxSamples = msToSamples(options.maxDurationMs);
  const caller = createTrack(maxSamples);
  const agent = createTrack(maxSamples);
  const end = () => Math.max(caller.end, agent.end);

  return {
    addCaller: (atMs, frame) => caller.write(atMs, frame),
    addAgent: (atMs, frame) => agent.write(atMs, frame),
    durationMs: () => (end() * 1000) / 16_000,
    pcm() {
      const out = new Int16Array(end());
      for (let index = 0; index * BLOCK_SAMPLES < out.length; index++) {
        const base = index * BLOCK_SAMPLES;
        const count = Math.min(BLOCK_SAMPLES, out.length - base);
        const a = caller.block(index);
        const b = agent.block(index);
        if (!a || !b) {
          // One side only (or neither): a copy, no mixing.
          const only = a ?? b;
          if (only) out.set(only.subarray(0, count), base);
          continue;
        }
        for (let i = 0; i < count; i++) {
          const value = a[i] + b[i];
          out[base + i] = value > 32767 ? 32767 : value < -32768 ? -32768 : value;
        }
      }
      return out;
    },
  };
}
