import { performance } from 'node:perf_hooks';
import type { CpuRunner } from '../../src/platform/cpu-pool.ts';
import { encodeMp3InPool } from '../../src/platform/audio/mp3.ts';
import { SAMPLE_RATE } from '../../src/platform/audio/frames.ts';
import { prng } from '../prng.ts';

// Post-call recordings encoding in the background lane of the server's CPU pool while a benchmark
// measures something else (bench/media.bench.ts, BENCH_BACKGROUND_ENCODES): `count` encodes of
// `seconds` of 16 kHz PCM (a tone under noise, the same for each), handed over at once as a burst
// of calls ending would, each through encodeMp3InPool(..., { lane: 'background' }).

/** Speech-like PCM: a 180 Hz tone with noise, in 1 s bursts and pauses. */
function recordingPcm(seconds: number): Int16Array {
  const random = prng(26);
  const pcm = new Int16Array(seconds * SAMPLE_RATE);
  for (let i = 0; i < pcm.length; i++) {
    const talking = Math.floor(i / SAMPLE_RATE) % 2 === 0;
    pcm[i] = Math.round((talking ? 6000 * Math.sin((2 * Math.PI * 180 * i) / SAMPLE_RATE) : 0) + (random() - 0.5) * 800);
  }
  return pcm;
}

export function startBackgroundEncodes(cpu: CpuRunner, count: number, seconds: number) {
  const pcm = recordingPcm(seconds);
  const started = performance.now();
  let done = 0;
  let bytes = 0;
  const errors: string[] = [];
  const all = Promise.all(
    Array.from({ length: count }, () =>
      encodeMp3InPool(cpu, pcm, SAMPLE_RATE, { lane: 'background' }).then(
        (mp3) => {
          done++;
          bytes += mp3.length;
        },
        (error: Error) => {
          errors.push(error.message);
        },
      ),
    ),
  );
  return {
    /** Encodes finished so far. */
    done: () => done,
    /** Waits for every encode; what they did. */
    async finish() {
      await all;
      return { encodes: count, pcm_seconds: seconds, done, failed: errors.length, errors: [...new Set(errors)].slice(0, 3), mp3_mb: Math.round(bytes / 1e5) / 10, all_done_after_s: Math.round((performance.now() - started) / 100) / 10 };
    },
  };
}
