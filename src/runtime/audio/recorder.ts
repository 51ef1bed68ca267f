import { msToSamples } from './frames.ts';

// The call recording: both sides mixed into one mono track, each frame placed on the call's
// timeline (ms since the answer) and summed with clipping. Memory grows in blocks as the call
// goes, never beyond its maximum duration.

const BLOCK_SAMPLES = 16_000 * 10;

export interface CallRecorder {
  addCaller(atMs: number, frame: Int16Array): void;
  addAgent(atMs: number, frame: Int16Array): void;
  /** Milliseconds recorded (up to the last written sample). */
  durationMs(): number;
  /** The mixed track up to the last written sample. */
  pcm(): Int16Array;
}

export function createCallRecorder(options: { maxDurationMs: number }): CallRecorder {
  const maxSamples = msToSamples(options.maxDurationMs);
  const blocks: Int32Array[] = [];
  let end = 0;

  function add(atMs: number, frame: Int16Array) {
    const start = msToSamples(atMs);
    if (start < 0 || start >= maxSamples) return;
    const length = Math.min(frame.length, maxSamples - start);
    let done = 0;
    // Block by block: a frame crosses at most one block boundary.
    while (done < length) {
      const at = start + done;
      const index = Math.floor(at / BLOCK_SAMPLES);
      while (blocks.length <= index) blocks.push(new Int32Array(BLOCK_SAMPLES));
      const block = blocks[index];
      const offset = at - index * BLOCK_SAMPLES;
      const count = Math.min(length - done, BLOCK_SAMPLES - offset);
      for (let i = 0; i < count; i++) block[offset + i] += frame[done + i];
      done += count;
    }
    end = Math.max(end, start + length);
  }

  return {
    addCaller: add,
    addAgent: add,
    durationMs: () => (end * 1000) / 16_000,
    pcm() {
      const out = new Int16Array(end);
      for (let index = 0; index * BLOCK_SAMPLES < end; index++) {
        const block = blocks[index];
        const base = index * BLOCK_SAMPLES;
        const count = Math.min(BLOCK_SAMPLES, end - base);
        for (let i = 0; i < count; i++) {
          const value = block[i];
          out[base + i] = value > 32767 ? 32767 : value < -32768 ? -32768 : value;
        }
      }
      return out;
    },
  };
}
