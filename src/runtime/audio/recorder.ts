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
    for (let i = 0; i < length; i++) {
      const at = start + i;
      const index = Math.floor(at / BLOCK_SAMPLES);
      while (blocks.length <= index) blocks.push(new Int32Array(BLOCK_SAMPLES));
      blocks[index][at % BLOCK_SAMPLES] += frame[i];
    }
    end = Math.max(end, start + length);
  }

  return {
    addCaller: add,
    addAgent: add,
    durationMs: () => (end * 1000) / 16_000,
    pcm() {
      const out = new Int16Array(end);
      for (let at = 0; at < end; at++) {
        const value = blocks[Math.floor(at / BLOCK_SAMPLES)][at % BLOCK_SAMPLES];
        out[at] = value > 32767 ? 32767 : value < -32768 ? -32768 : value;
      }
      return out;
    },
  };
}
