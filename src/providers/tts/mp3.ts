import { Mp3Encoder } from '@breezystack/lamejs';

// MP3 encoding of mono PCM16 (voice previews now, call recordings later). lamejs is pure
// JavaScript: no native addon, no install script.

const FRAME = 1152;

/** Encodes mono PCM16 at `sampleRate` (8000..48000 Hz) as a constant-bitrate MP3. */
export function encodeMp3(pcm: Int16Array, sampleRate: number, kbps = sampleRate <= 16_000 ? 32 : 64): Buffer {
  const encoder = new Mp3Encoder(1, sampleRate, kbps);
  const parts: Buffer[] = [];
  const push = (bytes: Uint8Array | Int8Array) => {
    // Copied at once: the encoder may hand out views of a buffer it reuses on the next call.
    if (bytes.length > 0) parts.push(Buffer.from(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
  };
  for (let i = 0; i < pcm.length; i += FRAME) push(encoder.encodeBuffer(pcm.subarray(i, i + FRAME)));
  push(encoder.flush());
  return Buffer.concat(parts);
}
