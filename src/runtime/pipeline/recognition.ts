import type { SpeechToText } from '../../ports/stt.ts';
import { createEarlyTranscriber } from '../early-transcript.ts';
import type { Utterance } from '../turn-detector.ts';
import type { TurnTrace } from '../tracing.ts';
import { type CallShell, type CallStage, REPEAT_PROMPT } from './call-pipeline.ts';
import type { EngineResponse } from './engine-response.ts';
import type { SpeechStage } from './speech.ts';
import { mayBargeIn } from './turn-taking.ts';

// The cascade's recognition stage: an utterance's words from the STT session — a batch recogniser
// asked per utterance (early, at a pause, when its requests stand alone), or the streaming
// recogniser whose finals are already in — then handed to the response stage. A streaming
// recogniser's interim results are caller speech too: words heard while the agent talks cut it, as
// the VAD does after `barge_in_min_ms`.

/** Interim results of a streaming recogniser: the text so far of the caller's utterance. */
export interface InterimResults {
  onInterim(listener: (text: string) => void): void;
}

export interface RecognitionDeps {
  stt: SpeechToText;
  /** STT_EARLY_TRANSCRIPT_MS: the pause after which the words go to a stateless recogniser early. */
  earlyTranscriptMs?: number;
  interims?: InterimResults;
  speech: SpeechStage;
  response: EngineResponse;
  traceCallerTurn(startMs: number): TurnTrace;
}

export function recognitionStage(shell: CallShell, deps: RecognitionDeps) {
  const { clock, agent, since } = shell;
  const { speech } = deps;
  // The words go to STT at a pause, unless the agent talked through them (too short to barge in: no turn).
  const transcriber = createEarlyTranscriber({
    stt: deps.stt,
    now: clock.now,
    language: agent.language,
    pauseMs: deps.earlyTranscriptMs,
    turnEndSilenceMs: agent.turn_end_silence_ms,
    wanted: () => !speech.current || shell.voicemail === 'pending',
  });
  deps.interims?.onInterim((text) => {
    if (text.trim() && mayBargeIn(shell, speech.current !== null)) shell.signal({ type: 'barge_in' });
  });

  async function utterance(heardUtterance: Utterance) {
    // Speech while the agent talks that was too short to barge in (a cough, "mm-hm") is not a turn.
    if (shell.ended || shell.voicemail === 'leaving' || (speech.current && shell.voicemail !== 'pending')) return transcriber.cancel();
    const turnEndAt = clock.now();
    const trace = deps.traceCallerTurn(heardUtterance.endMs);
    trace.stage('vad.end_of_turn', heardUtterance.endMs, turnEndAt);
    let text = '';
    let sttMs = 0;
    try {
      ({ text, sttMs } = await transcriber.transcribe(heardUtterance.audio));
      text = text.trim();
      trace.stage('stt', turnEndAt, clock.now(), { stt_ms: sttMs, empty: !text });
    } catch (error) {
      trace.fail('stt_failed');
      trace.end(clock.now());
      if (shell.ended) return;
      shell.observer.error('stt_failed', error instanceof Error ? error.message : String(error));
      if (!speech.current) speech.say(REPEAT_PROMPT, null);
      return;
    }
    // stt_wait_ms: what the turn waited for its words (less than the recogniser's time when asked early).
    const heard = { stt_ms: sttMs, stt_wait_ms: Math.round(clock.now() - turnEndAt) };
    if (shell.ended || !text) {
      trace.end(clock.now());
      // Speech without words (a cough, a noise) is no turn: the silence it broke counts again
      // (not while a machine's greeting is awaited; the timer stands aside while the agent talks).
      if (shell.voicemail === 'none') void shell.proceed(null);
      return;
    }
    await deps.response.answer(text, { start_ms: since(heardUtterance.startMs), end_ms: since(heardUtterance.endMs) }, turnEndAt, heard, trace);
  }

  const stage: CallStage = {
    signal: (s) => {
      if (s.type === 'end') transcriber.cancel();
    },
  };
  return { stage, utterance, pause: transcriber.pause };
}
