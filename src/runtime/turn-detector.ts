import { FRAME_MS } from './audio/frames.ts';

// Turn taking on the caller's side: a voice activity detector classifies each 20 ms frame; an
// utterance starts with speech and ends after `turnEndSilenceMs` of silence. Bursts shorter than
// `minSpeechMs` (a click, a cough) are not utterances.

export interface Utterance {
  audio: Int16Array;
  /** Clock times of its first and last speech frames. */
  startMs: number;
  endMs: number;
}

export interface TurnDetectorDeps {
  isSpeech(frame: Int16Array): boolean;
  turnEndSilenceMs: number;
  minSpeechMs?: number;
  /** Bound on one utterance (longer speech is cut into utterances of this length). */
  maxUtteranceMs?: number;
  /** The caller started speaking. */
  onSpeechStart(atMs: number): void;
  /** The caller has been speaking for `speechMs` in this utterance (called on every speech frame). */
  onSpeech(speechMs: number): void;
  onUtterance(utterance: Utterance): void;
}

export function createTurnDetector(deps: TurnDetectorDeps) {
  const minSpeechMs = deps.minSpeechMs ?? 100;
  const maxFrames = Math.ceil((deps.maxUtteranceMs ?? 30_000) / FRAME_MS);
  let frames: Int16Array[] = [];
  let speechMs = 0;
  let silenceMs = 0;
  let startMs = 0;
  let lastSpeechMs = 0;

  function finish() {
    const utterance = frames;
    frames = [];
    const spoken = speechMs;
    speechMs = 0;
    silenceMs = 0;
    if (spoken < minSpeechMs) return;
    const audio = new Int16Array(utterance.reduce((n, f) => n + f.length, 0));
    let offset = 0;
    for (const frame of utterance) {
      audio.set(frame, offset);
      offset += frame.length;
    }
    deps.onUtterance({ audio, startMs, endMs: lastSpeechMs + FRAME_MS });
  }

  return {
    /** One caller frame, received at clock time `atMs`. Synchronous and cheap: it runs on the frame path. */
    feed(frame: Int16Array, atMs: number) {
      const speech = deps.isSpeech(frame);
      if (frames.length === 0) {
        if (!speech) return;
        startMs = atMs;
        deps.onSpeechStart(atMs);
      }
      frames.push(frame);
      if (speech) {
        speechMs += FRAME_MS;
        silenceMs = 0;
        lastSpeechMs = atMs;
        deps.onSpeech(speechMs);
      } else {
        silenceMs += FRAME_MS;
      }
      if (silenceMs >= deps.turnEndSilenceMs || frames.length >= maxFrames) finish();
    },
    /** True while an utterance is being collected. */
    get speaking(): boolean {
      return frames.length > 0;
    },
  };
}
