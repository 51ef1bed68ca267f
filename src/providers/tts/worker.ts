import { BUILTIN_SAMPLE_RATE, BUILTIN_VOICES, synthesizeWith } from './builtin.ts';

// The speech task run by the app's CPU pool (platform/cpu-pool.ts) in a worker thread: the
// built-in synthesiser takes hundreds of milliseconds for a long text, which on the main thread
// would stall every other request. A thin wrapper over the pure functions of builtin.ts, which
// stay testable directly (the MP3 encoder's task is platform/audio/mp3-worker.ts).

/** Built-in voice `voiceId` speaking `text`: mono PCM16 at BUILTIN_SAMPLE_RATE. */
export function synthesizeBuiltin(input: { text: string; voiceId: string }): Int16Array {
  const voice = BUILTIN_VOICES.find((v) => v.id === input.voiceId);
  if (!voice) throw new Error(`builtin TTS has no voice ${input.voiceId}`);
  return synthesizeWith(input.text, voice.params, BUILTIN_SAMPLE_RATE);
}
