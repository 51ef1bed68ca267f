import type { WasmMediaEncoder } from 'wasm-media-encoders';
import { type CpuRunner, type CpuRunOptions, cpuTask } from '../../platform/cpu-pool.ts';
import { infoFrame } from './mp3-info-tag.ts';
import type * as worker from './mp3-worker.ts';

// MP3 encoding of mono PCM16 (voice previews, call recordings). wasm-media-encoders is LAME 3.100
// compiled to WebAssembly, shipped inside its npm package (no native addon, no install script):
// about four times faster than lamejs, the JavaScript port used before (a 60 s recording in ~0.3 s
// of a core instead of ~1.3 s), which is what lets a hundred calls' recordings be ready within
// seconds of their end. Its CommonJS entry embeds the module, so worker threads load it too.

/** PCM handed to the encoder per step: bounds the WebAssembly memory it grows to. */
const CHUNK = 16_384;
const OUTPUT_RATES = new Set([8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]);
type Kbps = 8 | 16 | 24 | 32 | 40 | 48 | 64 | 80 | 96 | 112 | 128 | 160 | 192 | 224 | 256 | 320;

let encoder: Promise<WasmMediaEncoder<'audio/mpeg'>> | undefined;

/** Encodes mono PCM16 at `sampleRate` (8000..48000 Hz) as a constant-bitrate MP3. */
export async function encodeMp3(pcm: Int16Array, sampleRate: number, kbps: Kbps = sampleRate <= 16_000 ? 32 : 64): Promise<Buffer> {
  if (!OUTPUT_RATES.has(sampleRate)) throw new Error(`MP3 cannot carry ${sampleRate} Hz`);
  encoder ??= import('wasm-media-encoders').then((m) => m.createMp3Encoder());
  const mp3 = await encoder;
  // From here on synchronous: one encoder per thread serves every encode, one at a time.
  mp3.configure({ channels: 1, sampleRate, bitrate: kbps, outputSampleRate: sampleRate as 16000 });
  const parts: Buffer[] = [];
  const floats = new Float32Array(Math.min(CHUNK, pcm.length));
  for (let i = 0; i < pcm.length; i += CHUNK) {
    const n = Math.min(CHUNK, pcm.length - i);
    for (let j = 0; j < n; j++) floats[j] = pcm[i + j] / 32768;
    // Copied at once: the encoder's output is a view of its memory, reused on the next step.
    parts.push(Buffer.from(mp3.encode([floats.subarray(0, n)])));
  }
  parts.push(Buffer.from(mp3.finalize()));
  const audio = Buffer.concat(parts);
  // The Info frame first: decoders then drop the encoder's delay and padding (exact length).
  const info = infoFrame(audio, pcm.length, sampleRate);
  return info ? Buffer.concat([info, audio]) : audio;
}

const encodeTask = cpuTask<typeof worker.encodeMp3Audio>(new URL('./mp3-worker.ts', import.meta.url), 'encodeMp3Audio');

/**
 * encodeMp3 in a worker thread of `cpu`. A voice preview encodes in the default `request` lane
 * (503 when the pool is busy); a call's recording passes `{ lane: 'background' }` (waits its turn
 * on the low-priority thread).
 */
export async function encodeMp3InPool(cpu: CpuRunner, pcm: Int16Array, sampleRate: number, options: CpuRunOptions = {}): Promise<Buffer> {
  const bytes = await cpu.run(encodeTask, { pcm, sampleRate }, options);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
