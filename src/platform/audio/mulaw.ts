import alawmulaw from 'alawmulaw';
import { FRAME_MS, SAMPLE_RATE } from './frames.ts';

// G.711 μ-law at 8 kHz, a carrier's own media (Twilio Media Streams), where it is carried as it
// comes — the caller's bytes to a speech model that takes μ-law, its μ-law back to the carrier —
// and decoded only where PCM is needed (the recording, when it is taken): each byte through a
// table built once with the codec library, each sample doubled to the runtime's 16 kHz by linear
// interpolation (telephone audio has nothing above 4 kHz; a resampler's filter would add nothing
// a recording needs).

export const MULAW_RATE = 8000;
/** One 20 ms frame: 160 bytes. */
export const MULAW_FRAME_BYTES = (MULAW_RATE * FRAME_MS) / 1000;
/** The byte of silence (positive zero), which pads a last frame. */
export const MULAW_SILENCE = 0xff;
/** Runtime samples (16 kHz) per μ-law byte. */
export const MULAW_STEP = SAMPLE_RATE / MULAW_RATE;

const TABLE = Int16Array.from({ length: 256 }, (_, byte) => alawmulaw.mulaw.decodeSample(byte));

/**
 * Decodes `mulaw` into `out` at 16 kHz (two samples a byte, from `out[at]`); `next` is the byte that
 * follows the last one on the timeline (the last sample is held when there is none).
 */
export function decodeMulawInto(mulaw: Uint8Array, out: Int16Array, at = 0, next?: number): void {
  const last = mulaw.length - 1;
  for (let i = 0; i <= last; i++) {
    const sample = TABLE[mulaw[i]];
    const following = i < last ? TABLE[mulaw[i + 1]] : next === undefined ? sample : TABLE[next];
    out[at + 2 * i] = sample;
    out[at + 2 * i + 1] = (sample + following) >> 1;
  }
}

/** μ-law 8 kHz as PCM16 16 kHz (a new array). */
export function mulawToPcm16k(mulaw: Uint8Array): Int16Array {
  const out = new Int16Array(mulaw.length * MULAW_STEP);
  decodeMulawInto(mulaw, out);
  return out;
}
