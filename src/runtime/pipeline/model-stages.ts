import { hasPhrase } from '../../platform/text.ts';
import type { AgentToolbox, DialogueEngine } from '../../engine/types.ts';
import { held } from '../../ports/clock.ts';
import type { SpeechModel, SpeechModelEvent, SpeechModelSession } from '../../ports/speech-model.ts';
import type { After } from '../agent-turn.ts';
import type { CallShell, CallSignal, PipelineParts } from './call-pipeline.ts';
import { type ModelCaller, modelCaller } from './model-caller.ts';
import { type ModelSpeech, modelSpeech } from './model-speech.ts';

// The stages of a speech-to-speech call (`llm.provider: "openai-realtime"`) on the call shell:
// the model hears the caller's frames as they come — turn-taking and recognition are its VAD and
// its transcription (model-caller.ts) — answers with the agent's tools (engine.toolsFor: the
// response stage, here), and its audio goes to the shell's speaker (model-speech.ts). The rules
// stay the runtime's: barge-in, end-call phrases, what follows a tool (transfer, end call).
// On a transport whose media is μ-law (the shell's codec), the model takes and gives that μ-law:
// the caller's bytes go to it as they came, its bytes to the speaker as it sent them.

export interface ModelStageDeps {
  model: SpeechModel;
  engine: DialogueEngine;
  workspaceId: string;
  variables: Record<string, string>;
  /** The wall clock's date, for the instructions ("Today is …"). */
  today: Date;
}

/** Opens the model's session with the agent's tools; null (the call failed) when it cannot be reached. */
async function openModel(shell: CallShell, deps: ModelStageDeps, toolbox: AgentToolbox): Promise<SpeechModelSession | null> {
  const { agent } = shell;
  try {
    return await held(
      shell.clock,
      // Barge-in is the runtime's (after barge_in_min_ms, only when the agent is interruptible): the model must not cut itself.
      deps.model.open({ instructions: toolbox.instructions, voice: agent.voice, language: agent.language, tools: toolbox.specs, turnEndSilenceMs: agent.turn_end_silence_ms, interruptResponse: false, codec: shell.codec }),
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    shell.observer.error('llm_failed', message);
    shell.finish({ status: 'failed', endReason: 'media_error', error: { code: 'llm_failed', message: `the speech model could not be reached: ${message}` } });
    return null;
  }
}

/** Runs a function the model called: what to tell it, and what follows the agent's words when the tool ends or transfers the call. */
async function runFunction(shell: CallShell, toolbox: AgentToolbox, event: Extract<SpeechModelEvent, { type: 'function_call' }>) {
  const actionsBefore = toolbox.actions.length;
  const result = await held(shell.clock, toolbox.run(event.name, event.arguments));
  let after: After | null = null;
  for (const action of toolbox.actions.slice(actionsBefore)) {
    if (action.type === 'transfer_call') after = { kind: 'transfer', to: action.to, reason: action.reason };
    else if (action.type === 'end_call') after = { kind: 'end', reason: action.reason };
  }
  return { output: result.output, after };
}

/** The caller said one of the agent's end-call phrases (a blank phrase is none: `hasPhrase`). */
const saidGoodbye = (agent: CallShell['agent'], text: string) => agent.end_call_phrases.some((p) => hasPhrase(text, p));

/** Where the model's events go: the caller's to turn-taking and recognition, the responses' to speech, the rest here. */
interface ModelEventRoutes {
  caller: ModelCaller;
  speech: ModelSpeech;
  responseStarted(responseId: string): void;
  functionCall(event: Extract<SpeechModelEvent, { type: 'function_call' }>): void;
}

function onModelEvent(shell: CallShell, event: SpeechModelEvent, to: ModelEventRoutes) {
  if (shell.ended || to.caller.event(event)) return;
  if (event.type === 'response_started') to.responseStarted(event.responseId);
  else if (event.type === 'audio') to.speech.audio(event, event.pcm);
  else if (event.type === 'audio_mulaw') to.speech.audio(event, event.mulaw);
  else if (event.type === 'agent_transcript') to.speech.words(event.responseId, event.text);
  else if (event.type === 'function_call') to.functionCall(event);
  else if (event.type === 'response_done') to.speech.done(event);
  else if (event.type === 'error') shell.observer.error('llm_failed', event.message);
  else if (event.type === 'closed') {
    shell.observer.error('llm_failed', `the speech model closed the session: ${event.reason}`);
    shell.finish({ status: 'failed', endReason: 'media_error', error: { code: 'llm_failed', message: 'the speech model closed the session' } });
  }
}

/** The caller's audio to the model (turn-taking and recognition are its own); audio it drops is reported once. */
function toModel<A>(shell: CallShell, send: (audio: A) => boolean | undefined) {
  let dropped = false;
  return (audio: A) => {
    if (send(audio) !== false || dropped) return;
    dropped = true;
    shell.observer.error('llm_failed', 'the speech model does not keep up: caller audio dropped');
  };
}

export function modelStages(shell: CallShell, deps: ModelStageDeps): PipelineParts {
  const { agent } = shell;
  const toolbox = deps.engine.toolsFor({ workspaceId: deps.workspaceId, agent, variables: deps.variables, now: deps.today });
  let session: SpeechModelSession | null = null;
  /** What follows once the agent's current words are played (a tool ended the call, or a phrase). */
  let after: After | null = null;
  const speech = modelSpeech(shell, { interrupt: (heard) => session?.interrupt(heard), spoken: () => shell.proceed(after) });
  const caller = modelCaller(shell, {
    agentSpeaking: () => speech.current !== null,
    heard: (text) => {
      if (!after && saidGoodbye(agent, text)) after = { kind: 'end', reason: 'caller_goodbye' };
      // The goodbye came after the agent had answered: nothing is left to say.
      if (after && !speech.current && !shell.speaker.busy) void shell.proceed(after);
    },
  });
  const sayExactly = (text: string) => session?.respond(`Say exactly this and nothing else: "${text}"`);

  async function onFunctionCall(event: Extract<SpeechModelEvent, { type: 'function_call' }>) {
    // A function called in a response that is not the one speaking (a cancelled one) is not run.
    const current = speech.current;
    if (shell.ended || !current || current.id !== event.responseId) return;
    current.toolCalls++;
    const result = await runFunction(shell, toolbox, event);
    if (shell.ended) return;
    after = result.after ?? after;
    session?.functionResult(event.callId, result.output);
  }

  function onResponseStarted(responseId: string) {
    const turnEndAt = caller.takeTurnEnd();
    const current = speech.current;
    // The model answering what the caller said over an agent that may not be interrupted: as in
    // the cascade, that speech is no turn. The response is cancelled; its events are dropped
    // (they name a response that is not the one speaking).
    if (current && turnEndAt !== null && !agent.interruptible) return session?.interrupt();
    // The answer after a function call still answers the caller's turn (its latency counts the tool).
    speech.begin(responseId, turnEndAt ?? (current?.toolCalls ? current.turnEndAt : null));
  }

  async function start() {
    session = await openModel(shell, deps, toolbox);
    if (!session) return;
    if (shell.ended) return session.close();
    session.onEvent((event) => onModelEvent(shell, event, { caller, speech, responseStarted: onResponseStarted, functionCall: (e) => void onFunctionCall(e) }));
    // The model hears the machine too: its message is left at once.
    if (shell.media.answeredBy === 'machine' || shell.machineHeard) return shell.leaveVoicemail();
    sayExactly(deps.engine.greet(agent, deps.variables).text);
  }

  function signal(s: CallSignal) {
    if (s.type === 'barge_in') return speech.interrupted();
    if (s.type === 'voicemail' && speech.current) session?.interrupt();
    speech.drop();
    if (s.type === 'end') {
      caller.end();
      session?.close();
    }
  }

  return {
    stages: [{ frame: toModel(shell, (frame: Int16Array) => session?.sendAudio(frame)), mulaw: toModel(shell, (mulaw: Uint8Array) => session?.sendMulaw(mulaw)), signal }],
    start,
    say: (text, next) => {
      if (next) after = next;
      sayExactly(text);
    },
    typed: (text) => {
      const at = shell.since(shell.clock.now());
      shell.record({ role: 'user', text, start_ms: at, end_ms: at });
      if (speech.current && agent.interruptible) shell.signal({ type: 'barge_in' });
      session?.sendText(text);
    },
    busy: () => speech.current !== null || caller.active,
  };
}
