import { encodeMp3 } from './mp3.ts';

// The MP3 encoder's task, run by the app's CPU pool (platform/cpu-pool.ts) in a worker thread: a
// long recording takes hundreds of milliseconds, which on the main thread would stall every other
// request. A thin wrapper over mp3.ts, which stays testable directly.

/** MP3 of mono PCM16 (arrives as a Uint8Array on the calling thread). */
export function encodeMp3Audio(input: { pcm: Int16Array; sampleRate: number }): Promise<Uint8Array> {
  return encodeMp3(input.pcm, input.sampleRate);
}
