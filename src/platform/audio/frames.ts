// Audio of a call, in the runtime and at the adapters' edge: PCM16 mono at 16 kHz, in frames of 20 ms.

export const SAMPLE_RATE = 16_000;
export const FRAME_MS = 20;
export const FRAME_SAMPLES = (SAMPLE_RATE * FRAME_MS) / 1000;

export const samplesToMs = (samples: number) => (samples * 1000) / SAMPLE_RATE;
export const msToSamples = (ms: number) => Math.round((ms * SAMPLE_RATE) / 1000);
export const framesDurationMs = (frames: number) => frames * FRAME_MS;

/** The pieces one after another in one array (a new one, unless there is a single piece). */
export function concatPcm(pieces: Int16Array[]): Int16Array {
  if (pieces.length === 1) return pieces[0];
  const whole = new Int16Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const piece of pieces) {
    whole.set(piece, at);
    at += piece.length;
  }
  return whole;
}

/** Cuts `pcm` into frames of FRAME_SAMPLES; the last one is zero-padded. */
export function splitFrames(pcm: Int16Array): Int16Array[] {
  const frames: Int16Array[] = [];
  for (let at = 0; at < pcm.length; at += FRAME_SAMPLES) {
    const frame = new Int16Array(FRAME_SAMPLES);
    frame.set(pcm.subarray(at, at + FRAME_SAMPLES));
    frames.push(frame);
  }
  return frames;
}
