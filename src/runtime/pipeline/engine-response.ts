import type { DialogueEngine, EngineAction } from '../../engine/types.ts';
import type { Heard } from '../agent-turn.ts';
import { createSentenceStream } from '../sentence-stream.ts';
import { type TurnTrace, traceActions } from '../tracing.ts';
import { type CallShell, REPEAT_PROMPT } from './call-pipeline.ts';
import type { SpeechStage } from './speech.ts';

// The cascade's response stage: a caller's turn (heard or typed) into the transcript, then the
// dialogue engine's reply streamed sentence by sentence to the speech stage. The engine's actions
// (transfer, end call) become what follows the reply; a failed reply asks the caller to repeat.

export interface EngineResponseDeps {
  engine: DialogueEngine;
  workspaceId: string;
  variables: Record<string, string>;
}

/** Where a caller's turn sits in the call, in its milliseconds since the answer. */
export interface CallerSpan {
  start_ms: number;
  end_ms: number;
}

export function engineResponse(shell: CallShell, speech: SpeechStage, deps: EngineResponseDeps) {
  const { clock, agent } = shell;

  async function respond(userText: string, turnEndAt: number, heard: Heard, trace: TurnTrace) {
    const current = speech.begin(turnEndAt, heard, trace);
    const askedAt = clock.now();
    const splitter = createSentenceStream((sentence) => speech.sentence(current, sentence));
    // What was said before this turn (its own entry is the last).
    const history = shell.transcript.slice(0, -1).map((entry) => ({ role: entry.role, text: entry.text }));
    let result: { reply: string; actions: EngineAction[] };
    try {
      result = await deps.engine.respond({
        workspaceId: deps.workspaceId,
        agent,
        history,
        userText,
        variables: deps.variables,
        signal: current.controller.signal,
        onReplyDelta: (fragment) => {
          if (speech.current !== current) return;
          if (current.timings && current.timings.llm_first_token_ms === 0) current.timings.llm_first_token_ms = Math.max(1, Math.round(clock.now() - askedAt));
          current.trace.first('llm.first_token', askedAt, clock.now());
          splitter.push(fragment);
        },
      });
    } catch (error) {
      if (speech.current !== current || shell.ended) return;
      current.trace.fail('llm_failed');
      shell.observer.error('llm_failed', error instanceof Error ? error.message : String(error));
      result = { reply: REPEAT_PROMPT, actions: [] };
      splitter.push(REPEAT_PROMPT);
    }
    if (speech.current !== current || shell.ended) return;
    traceActions(current.trace, result.actions, askedAt, clock.now());
    splitter.flush();
    for (const action of result.actions) {
      if (action.type === 'transfer_call') current.after = { kind: 'transfer', to: action.to, reason: action.reason };
      else if (action.type === 'end_call') current.after = { kind: 'end', reason: action.reason };
    }
    speech.generated(current);
  }

  return {
    /** The caller's turn, heard or typed: into the transcript, then answered (or the voicemail message left after a machine's greeting). */
    async answer(text: string, span: CallerSpan, turnEndAt: number, heard: Heard, trace: TurnTrace) {
      shell.callerSpoke();
      shell.record({ role: 'user', text, ...span });
      if (shell.voicemail === 'pending') {
        trace.end(clock.now());
        return shell.leaveVoicemail();
      }
      await respond(text, turnEndAt, heard, trace);
    },
  };
}

export type EngineResponse = ReturnType<typeof engineResponse>;
