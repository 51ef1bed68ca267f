import type { SpeechToText } from './ports.ts';

// Early transcription: the caller's words are sent to the recogniser when they pause (a shorter
// silence than the one that ends their turn), so the transcript is usually back by the time the
// turn ends and the reply starts at once. If they speak again before the turn ends, the early
// request is aborted and forgotten; the utterance is then transcribed whole when it ends. Only for
// recognisers whose requests stand alone (`SpeechToText.stateless`).

export interface EarlyTranscriberDeps {
  stt: SpeechToText;
  language: string;
}

export function createEarlyTranscriber(deps: EarlyTranscriberDeps) {
  let early: { answer: Promise<string>; controller: AbortController } | null = null;

  const ask = (audio: Int16Array, signal?: AbortSignal) => deps.stt.transcribe(audio, { language: deps.language, signal });

  return {
    /** The caller paused: transcribe what they said so far. */
    begin(audio: Int16Array) {
      early?.controller.abort();
      const controller = new AbortController();
      const answer = ask(audio, controller.signal);
      // Awaited only if the turn ends before the caller speaks again (its failure is then the turn's).
      answer.catch(() => undefined);
      early = { answer, controller };
    },
    /** The caller spoke again: the early request no longer covers the utterance. */
    cancel() {
      early?.controller.abort();
      early = null;
    },
    /** The utterance's transcript: the early answer when it covers the whole utterance, else asked now. */
    transcribe(audio: Int16Array): Promise<string> {
      const pending = early;
      early = null;
      return pending ? pending.answer : ask(audio);
    },
  };
}
