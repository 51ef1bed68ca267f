import type { RuntimeTimer } from '../../ports/clock.ts';
import type { SpeechModelEvent } from '../../ports/speech-model.ts';
import type { CallShell } from './call-pipeline.ts';

// Turn-taking and recognition of a speech-to-speech call: the model's VAD says when the caller
// starts and stops, its transcription what they said. Speech over the agent for `barge_in_min_ms`
// is a barge-in (the model is configured not to cut itself). The caller's entry keeps the end of
// their speech, apart from the latency mark the next response takes: its transcription may come
// after that response started.

export interface ModelCallerDeps {
  agentSpeaking(): boolean;
  /** The caller's words, once recorded. */
  heard(text: string): void;
}

export function modelCaller(shell: CallShell, deps: ModelCallerDeps) {
  const { clock, agent, since } = shell;
  /** When the caller started, when their last utterance ended (for its entry). */
  let startedAt: number | null = null;
  let endedAt: number | null = null;
  /** The end of the turn the next response answers: its latency mark, taken by that response. */
  let turnEndAt: number | null = null;
  let bargeInTimer: RuntimeTimer | null = null;

  function started() {
    shell.callerActive();
    startedAt = clock.now();
    endedAt = null;
    bargeInTimer?.cancel();
    if (deps.agentSpeaking() && agent.interruptible && shell.voicemail === 'none') {
      bargeInTimer = shell.later(() => startedAt !== null && shell.signal({ type: 'barge_in' }), agent.barge_in_min_ms);
    }
  }

  function transcribed(text: string, final: boolean) {
    if (!final) return;
    if (text) {
      shell.callerSpoke();
      const end = endedAt ?? clock.now();
      shell.record({ role: 'user', text, start_ms: since(startedAt ?? end), end_ms: since(end) });
      deps.heard(text);
    }
    startedAt = null;
    endedAt = null;
  }

  return {
    /** Handles the caller's events of the model; false for any other. */
    event(event: SpeechModelEvent): boolean {
      if (event.type === 'speech_started') started();
      else if (event.type === 'speech_stopped') {
        bargeInTimer?.cancel();
        endedAt = clock.now();
        turnEndAt = endedAt;
      } else if (event.type === 'user_transcript') transcribed(event.text, event.final);
      else return false;
      return true;
    },
    /** The end of the caller's turn a response answers (null if none): taken once. */
    takeTurnEnd(): number | null {
      const at = turnEndAt;
      turnEndAt = null;
      return at;
    },
    /** The caller has the floor (speaking, or their words not transcribed yet). */
    get active(): boolean {
      return startedAt !== null;
    },
    end() {
      bargeInTimer?.cancel();
    },
  };
}

export type ModelCaller = ReturnType<typeof modelCaller>;
