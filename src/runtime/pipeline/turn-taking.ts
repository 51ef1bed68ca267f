import { createTurnDetector, type TurnDetectorDeps, type Utterance } from '../turn-detector.ts';
import type { CallShell, CallStage } from './call-pipeline.ts';

// The cascade's turn-taking stage: the VAD classifies each caller frame, the end-of-turn strategy
// (turn-detector.ts: the agent's turn-ending silence) cuts utterances and hands them to recognition.
// Speech over the agent for `barge_in_min_ms` is a barge-in, unless the agent may not be
// interrupted or a machine is being answered.

export interface TurnTakingDeps {
  /** PCM16 16 kHz frame classifier (WebRTC VAD). */
  isSpeech(frame: Int16Array): boolean;
  /** The agent is saying (or preparing) a turn. */
  agentTalking(): boolean;
  onUtterance(utterance: Utterance): void;
  /** Recognition's early look at a pause (early-transcript.ts). */
  pause?: TurnDetectorDeps['pause'];
}

/** The caller's speech over the agent may cut it now. */
export const mayBargeIn = (shell: CallShell, agentTalking: boolean) => agentTalking && shell.agent.interruptible && shell.voicemail === 'none' && !shell.ended;

export function turnTakingStage(shell: CallShell, deps: TurnTakingDeps): CallStage {
  const { agent } = shell;
  const detector = createTurnDetector({
    isSpeech: deps.isSpeech,
    turnEndSilenceMs: agent.turn_end_silence_ms,
    onSpeechStart: () => shell.callerActive(),
    onSpeech: (speechMs) => {
      if (speechMs >= agent.barge_in_min_ms && mayBargeIn(shell, deps.agentTalking())) shell.signal({ type: 'barge_in' });
    },
    onUtterance: deps.onUtterance,
    pause: deps.pause,
  });
  return { frame: (frame, atMs) => detector.feed(frame, atMs) };
}
