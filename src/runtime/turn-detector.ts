import { concatPcm, FRAME_MS } from '../platform/audio/frames.ts';

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
  /**
   * The caller has been silent for `pauseMs` (shorter than `turnEndSilenceMs`) after at least
   * `minSpeechMs` of speech: `onPause` gets the utterance so far; `onResume` follows if they speak
   * again before their turn ends.
   */
  pause?: { pauseMs: number; onPause(audio: Int16Array): void; onResume(): void };
}

export function createTurnDetector(deps: TurnDetectorDeps) {
  const minSpeechMs = deps.minSpeechMs ?? 100;
  const maxFrames = Math.ceil((deps.maxUtteranceMs ?? 30_000) / FRAME_MS);
  let frames: Int16Array[] = [];
  let speechMs = 0;
  let silenceMs = 0;
  let startMs = 0;
  let lastSpeechMs = 0;
  /** `onPause` was called for the silence now running. */
  let paused = false;

  const pause = deps.pause && deps.pause.pauseMs < deps.turnEndSilenceMs ? deps.pause : null;

  // A copy even of a single frame: the utterance's audio is handed on and kept.
  const joined = (parts: Int16Array[]) => (parts.length === 1 ? parts[0].slice() : concatPcm(parts));

  function finish() {
    const utterance = frames;
    frames = [];
    const spoken = speechMs;
    speechMs = 0;
    silenceMs = 0;
    paused = false;
    if (spoken < minSpeechMs) return;
    deps.onUtterance({ audio: joined(utterance), startMs, endMs: lastSpeechMs + FRAME_MS });
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
        if (paused) {
          paused = false;
          pause?.onResume();
        }
        speechMs += FRAME_MS;
        silenceMs = 0;
        lastSpeechMs = atMs;
        deps.onSpeech(speechMs);
      } else {
        silenceMs += FRAME_MS;
        if (pause && !paused && silenceMs >= pause.pauseMs && speechMs >= minSpeechMs) {
          paused = true;
          pause.onPause(joined(frames));
        }
      }
      if (silenceMs >= deps.turnEndSilenceMs || frames.length >= maxFrames) finish();
    },
    /** True while an utterance is being collected. */
    get speaking(): boolean {
      return frames.length > 0;
    },
  };
}
