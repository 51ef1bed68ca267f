import { type CpuRunner, type CpuRunOptions, cpuTask } from '../../platform/cpu-pool.ts';
import { infoFrame } from './mp3-info-tag.ts';
import type * as worker from './worker.ts';

// MP3 encoding of mono PCM16 (voice previews now, call recordings later). lamejs is pure
// JavaScript: no native addon, no install script. It is loaded with import(): its CommonJS entry
// is a browser script without exports, and worker threads load this file as CommonJS.

const FRAME = 1152;
let lamejs: Promise<typeof import('@breezystack/lamejs')> | undefined;

/** Encodes mono PCM16 at `sampleRate` (8000..48000 Hz) as a constant-bitrate MP3. */
export async function encodeMp3(pcm: Int16Array, sampleRate: number, kbps = sampleRate <= 16_000 ? 32 : 64): Promise<Buffer> {
  lamejs ??= import('@breezystack/lamejs');
  const { Mp3Encoder } = await lamejs;
  const encoder = new Mp3Encoder(1, sampleRate, kbps);
  const parts: Buffer[] = [];
  const push = (bytes: Uint8Array | Int8Array) => {
    // Copied at once: the encoder may hand out views of a buffer it reuses on the next call.
    if (bytes.length > 0) parts.push(Buffer.from(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
  };
  for (let i = 0; i < pcm.length; i += FRAME) push(encoder.encodeBuffer(pcm.subarray(i, i + FRAME)));
  push(encoder.flush());
  const audio = Buffer.concat(parts);
  // The Info frame first: decoders then drop the encoder's delay and padding (exact length).
  const info = infoFrame(audio, pcm.length, sampleRate);
  return info ? Buffer.concat([info, audio]) : audio;
}

const encodeTask = cpuTask<typeof worker.encodeMp3Audio>(new URL('./worker.ts', import.meta.url), 'encodeMp3Audio');

/**
 * encodeMp3 in a worker thread of `cpu`: lamejs takes about a second for a minute of speech. A
 * voice preview encodes in the default `request` lane (503 when the pool is busy); a call's
 * recording passes `{ lane: 'background' }` (waits its turn on the low-priority thread).
 */
export async function encodeMp3InPool(cpu: CpuRunner, pcm: Int16Array, sampleRate: number, options: CpuRunOptions = {}): Promise<Buffer> {
  const bytes = await cpu.run(encodeTask, { pcm, sampleRate }, options);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
