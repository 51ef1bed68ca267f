import type { DialogueEngine } from '../engine/types.ts';
import type { RuntimeClock } from '../ports/clock.ts';
import type { SpeechToText } from '../ports/stt.ts';
import type { CallMedia, SimulatedLatency } from '../ports/telephony.ts';
import type { TextToSpeech } from '../ports/tts.ts';
import { NOTHING_HEARD } from './agent-turn.ts';
import type { CallAgent } from './call-agent.ts';
import type { RecorderSink, SessionObserver } from './outcome.ts';
import { createCallPipeline } from './pipeline/call-pipeline.ts';
import { engineResponse } from './pipeline/engine-response.ts';
import { type InterimResults, recognitionStage } from './pipeline/recognition.ts';
import { speechStage } from './pipeline/speech.ts';
import { turnTakingStage } from './pipeline/turn-taking.ts';
import { timedPorts } from './timed-ports.ts';
import { NO_TRACE, type TraceSpan, turnTrace } from './tracing.ts';

// One live cascade call (DESIGN "Call runtime"): the call shell (pipeline/call-pipeline.ts) with
// the cascade's stages — turn-taking (VAD → end of turn), recognition (STT), response (the
// dialogue engine, streamed), speech (sentences → TTS → the speaker). No HTTP, no SQL, no vendor.

export { REPEAT_PROMPT, STILL_THERE_PROMPT } from './pipeline/call-pipeline.ts';

export interface CallSessionDeps {
  clock: RuntimeClock;
  media: CallMedia;
  stt: SpeechToText;
  tts: TextToSpeech;
  engine: DialogueEngine;
  agent: CallAgent;
  workspaceId: string;
  variables: Record<string, string>;
  /** PCM16 16 kHz frame classifier (WebRTC VAD). */
  isSpeech(frame: Int16Array): boolean;
  observer: SessionObserver;
  recorder?: RecorderSink;
  /** Silence after which the caller's words go to a `stateless` recogniser before their turn ends (early-transcript.ts). */
  earlyTranscriptMs?: number;
  /** A streaming recogniser's interim results (STT_STREAMING=realtime): words over the agent cut it. */
  interims?: InterimResults;
  /** Simulated provider latencies (a sandbox call's `simulation.latency`), waited on the clock. */
  latency?: SimulatedLatency;
  /** The call's span (tracing port): a child per turn, and per stage under it. */
  trace?: TraceSpan;
}

export function createCallSession(deps: CallSessionDeps) {
  // The platform's work held on the clock (virtual sandbox time stands still for it), simulated latencies waited.
  const { stt, tts, engine } = timedPorts(deps.clock, deps, deps.latency);
  let turnIndex = 0;
  const traceTurn = (startMs: number, kind: 'caller' | 'typed' | 'agent') => turnTrace(deps.trace ?? NO_TRACE, ++turnIndex, startMs, kind);
  return createCallPipeline(deps, (shell) => {
    const { clock, agent } = shell;
    const speech = speechStage(shell, { tts, traceAgentTurn: () => traceTurn(clock.now(), 'agent') });
    const response = engineResponse(shell, speech, { engine, workspaceId: deps.workspaceId, variables: deps.variables });
    const recognition = recognitionStage(shell, { stt, earlyTranscriptMs: deps.earlyTranscriptMs, interims: deps.interims, speech, response, traceCallerTurn: (startMs) => traceTurn(startMs, 'caller') });
    const turnTaking = turnTakingStage(shell, { isSpeech: deps.isSpeech, agentTalking: () => speech.current !== null, onUtterance: (u) => void recognition.utterance(u), pause: recognition.pause });
    return {
      stages: [turnTaking, recognition.stage, speech],
      start() {
        if (shell.machineHeard) return shell.leaveVoicemail();
        if (shell.media.answeredBy !== 'machine') return speech.say(engine.greet(agent, deps.variables).text, null);
        // A machine: hang up, or wait for its greeting to end (its utterance), then leave the message.
        if (agent.voicemail.action === 'hangup') shell.leaveVoicemail();
        else shell.awaitMachineGreeting();
      },
      say: (text, after) => speech.say(text, after),
      /** Typed text: a turn at once, over the agent if it talks. */
      typed(text) {
        if (shell.voicemail === 'leaving') return;
        shell.callerActive();
        if (speech.current) {
          if (!agent.interruptible) return;
          shell.signal({ type: 'barge_in' });
        }
        const at = clock.now();
        void response.answer(text, { start_ms: shell.since(at), end_ms: shell.since(at) }, at, NOTHING_HEARD, traceTurn(at, 'typed'));
      },
      busy: () => speech.current !== null,
    };
  });
}

export type CallSession = ReturnType<typeof createCallSession>;
