import type { SpeechToText } from '../ports/stt.ts';

// Early transcription: the caller's words are sent to the recogniser when they pause (a shorter
// silence than the one that ends their turn), so the transcript is usually back by the time the
// turn ends and the reply starts at once. If they speak again before the turn ends, the early
// request is aborted and forgotten; the utterance is then transcribed whole when it ends. Only for
// recognisers whose requests stand alone (`SpeechToText.stateless`).

export interface EarlyTranscriberDeps {
  stt: SpeechToText;
  language: string;
  /** The pause that sends the words early (STT_EARLY_TRANSCRIPT_MS; 0 or absent: off), at most half the turn-ending silence. */
  pauseMs?: number;
  turnEndSilenceMs: number;
  /** Whether speech that paused now can become a turn (not, say, a murmur the agent talked through). */
  wanted(): boolean;
  /** The call's clock, to time the recogniser. */
  now(): number;
}

/** A transcript and the recogniser's own time for it. */
export interface Transcribed {
  text: string;
  sttMs: number;
}

export function createEarlyTranscriber(deps: EarlyTranscriberDeps) {
  let early: { answer: Promise<Transcribed>; controller: AbortController } | null = null;
  function cancel() {
    early?.controller.abort();
    early = null;
  }

  const ask = (audio: Int16Array, signal?: AbortSignal): Promise<Transcribed> => {
    const askedAt = deps.now();
    return deps.stt.transcribe(audio, { language: deps.language, signal }).then((text) => ({ text, sttMs: Math.round(deps.now() - askedAt) }));
  };
  const pauseMs = deps.stt.stateless && deps.pauseMs ? Math.min(deps.pauseMs, deps.turnEndSilenceMs / 2) : 0;

  /** The caller paused: transcribe what they said so far. */
  function begin(audio: Int16Array) {
    if (!deps.wanted()) return;
    early?.controller.abort();
    const controller = new AbortController();
    const answer = ask(audio, controller.signal);
    // Awaited only if the turn ends before the caller speaks again (its failure is then the turn's).
    answer.catch(() => undefined);
    early = { answer, controller };
  }

  return {
    /** The turn detector's `pause` option (undefined when early transcription is off). */
    pause: pauseMs > 0 ? { pauseMs, onPause: begin, onResume: cancel } : undefined,
    begin,
    /** The caller spoke again: the early request no longer covers the utterance. */
    cancel,
    /** The utterance's transcript: the early answer when it covers the whole utterance, else asked now. */
    transcribe(audio: Int16Array): Promise<Transcribed> {
      const pending = early;
      early = null;
      return pending ? pending.answer : ask(audio);
    },
  };
}
