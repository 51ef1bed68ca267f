import { BUILTIN_SAMPLE_RATE, BUILTIN_VOICES, synthesizeWith } from './builtin.ts';
import { encodeMp3 } from './mp3.ts';

// The speech tasks run by the app's CPU pool (platform/cpu-pool.ts), each in a worker thread:
// the built-in synthesiser and the MP3 encoder take hundreds of milliseconds for a long text,
// which on the main thread would stall every other request. Thin wrappers over the pure
// functions of builtin.ts and mp3.ts, which stay testable directly.

/** Built-in voice `voiceId` speaking `text`: mono PCM16 at BUILTIN_SAMPLE_RATE. */
export function synthesizeBuiltin(input: { text: string; voiceId: string }): Int16Array {
  const voice = BUILTIN_VOICES.find((v) => v.id === input.voiceId);
  if (!voice) throw new Error(`builtin TTS has no voice ${input.voiceId}`);
  return synthesizeWith(input.text, voice.params, BUILTIN_SAMPLE_RATE);
}

/** MP3 of mono PCM16 (arrives as a Uint8Array on the calling thread). */
export function encodeMp3Audio(input: { pcm: Int16Array; sampleRate: number }): Promise<Uint8Array> {
  return encodeMp3(input.pcm, input.sampleRate);
}
