import type { ResponderContext } from './session.ts';

// Helpers for tests against the fake Realtime server: a caller's audio in the runtime's 20 ms
// frames at 16 kHz (speech as a loud tone, silence as zeros), the responder that says what the
// platform asked for, and event collection.

const RATE = 16_000;
const FRAME = 320;

/** Frames of speech and silence, in order. */
export function callerAudio(parts: Array<{ speechMs: number } | { silenceMs: number }>): Int16Array[] {
  const frames: Int16Array[] = [];
  let t = 0;
  for (const part of parts) {
    const speech = 'speechMs' in part;
    const count = Math.round(((speech ? part.speechMs : part.silenceMs) * RATE) / 1000 / FRAME);
    for (let f = 0; f < count; f++) {
      const frame = new Int16Array(FRAME);
      if (speech) for (let i = 0; i < FRAME; i++, t++) frame[i] = Math.round(8000 * Math.sin((2 * Math.PI * 300 * t) / RATE));
      frames.push(frame);
    }
  }
  return frames;
}

/** `ms` of speech as one run of samples (what a media client sends, paced). */
export function speechSamples(ms: number): Int16Array {
  return Int16Array.from(callerAudio([{ speechMs: ms }]).flatMap((frame) => Array.from(frame)));
}

/**
 * The reply to a response the platform created with instructions of its own (the greeting, a
 * "still there?" prompt: `Say exactly "…"`): the quoted words.
 */
export const sayExactly = ({ instructions }: ResponderContext) => ({ text: /"(.*)"$/.exec(instructions ?? '')?.[1] ?? '' });

/** Every event the session reports, in order. */
export function collect<E>(subscribe: (listener: (event: E) => void) => void): E[] {
  const events: E[] = [];
  subscribe((event) => events.push(event));
  return events;
}

/** Polls until `probe` answers something truthy (10 s at most). */
export async function waitFor<T>(probe: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
