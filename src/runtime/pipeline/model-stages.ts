import { hasPhrase } from '../../platform/text.ts';
import type { AgentToolbox, DialogueEngine } from '../../engine/types.ts';
import { concatPcm, FRAME_SAMPLES } from '../../platform/audio/frames.ts';
import { held, type RuntimeTimer } from '../../ports/clock.ts';
import type { SpeechModel, SpeechModelEvent, SpeechModelSession } from '../../ports/speech-model.ts';
import type { After } from '../agent-turn.ts';
import type { TranscriptEntry } from '../outcome.ts';
import { playedWords } from '../sentence-stream.ts';
import type { SpokenSegment } from '../speaker.ts';
import type { CallShell, CallSignal, PipelineParts } from './call-pipeline.ts';

// The stages of a speech-to-speech call (`llm.provider: "openai-realtime"`) on the call shell:
// the model hears the caller's frames as they come (turn-taking and recognition are its VAD and
// its transcription), answers with the agent's tools (engine.toolsFor), and its audio goes to the
// shell's speaker (speech). The runtime keeps the rules: barge-in after `barge_in_min_ms` of the
// caller's speech (the model told where it was cut), end-call phrases, the transcript with per-turn
// latency (the caller's turn end as the model heard it → the first agent frame written).

export interface ModelStageDeps {
  model: SpeechModel;
  engine: DialogueEngine;
  workspaceId: string;
  variables: Record<string, string>;
  /** The wall clock's date, for the instructions ("Today is …"). */
  today: Date;
}

/** The response the agent is speaking: its audio as queued segments, its words, what follows it. */
interface Speaking {
  id: string;
  itemId: string | null;
  segments: SpokenSegment[];
  text: string;
  /** Clock time the caller's turn ended (null for a greeting or a prompt). */
  turnEndAt: number | null;
  firstFrameAt: number | null;
  generated: boolean;
  /** Functions the model called in it: the answer comes in the response their results ask for. */
  toolCalls: number;
  /** Audio short of a whole frame, waiting for the next delta (no padding between deltas). */
  carry: Int16Array;
}

/** The caller as the model hears them: when they started, when they stopped. */
interface CallerSpeech {
  since: number | null;
  /** The end of their last utterance, kept for its transcript entry (which may come after the reply started). */
  endedAt: number | null;
  /** The end of the turn the next response answers: its latency mark, taken by that response. */
  turnEndAt: number | null;
}

export function modelStages(shell: CallShell, deps: ModelStageDeps): PipelineParts {
  const { clock, agent, speaker, since } = shell;
  const { stream } = shell.media;
  let session: SpeechModelSession | null = null;
  let toolbox: AgentToolbox | null = null;
  let speaking: Speaking | null = null;
  /** What follows once the agent's current words are played (a tool ended the call, or a phrase). */
  let after: After | null = null;
  const caller: CallerSpeech = { since: null, endedAt: null, turnEndAt: null };
  let bargeInTimer: RuntimeTimer | null = null;
  let droppedAudio = false;

  const sayExactly = (text: string) => session?.respond(`Say exactly this and nothing else: "${text}"`);

  // ---- speech: the model's audio through the shell's speaker ---------------------------------

  function onAudio(event: Extract<SpeechModelEvent, { type: 'audio' }>) {
    const current = speaking;
    if (!current || current.id !== event.responseId) return;
    current.itemId = event.itemId;
    const pcm = concatPcm([current.carry, event.pcm]);
    const whole = pcm.length - (pcm.length % FRAME_SAMPLES);
    current.carry = pcm.slice(whole);
    if (whole > 0) play(current, pcm.subarray(0, whole));
  }

  /** Queues the response's audio; its first frame's time is the turn's latency mark. */
  function play(current: Speaking, pcm: Int16Array) {
    if (current.firstFrameAt === null && current.segments.length === 0) {
      void speaker.nextFrame().then((at) => {
        if (current.firstFrameAt === null) current.firstFrameAt = at;
      });
    }
    const segment = speaker.enqueue('', pcm);
    if (!segment) return shell.overflow('the agent reply exceeded the audio bound');
    current.segments.push(segment);
  }

  /** The response's transcript entry: from its first frame to its last (played or queued). */
  function recordResponse(current: Speaking) {
    const text = current.text.trim();
    if (!text) return;
    const start = current.firstFrameAt ?? clock.now();
    const frames = current.segments.reduce((sum, s) => sum + s.frames, 0);
    const entry: TranscriptEntry = { role: 'agent', text, start_ms: since(start), end_ms: since(start + frames * 20) };
    if (current.turnEndAt !== null && current.firstFrameAt !== null) entry.latency_ms = Math.round(current.firstFrameAt - current.turnEndAt);
    shell.record(entry);
    stream.mark(`agent-turn-${shell.transcript.length}`);
  }

  /** The response is generated and played out: its transcript entry, then what follows. */
  async function completeResponse(current: Speaking) {
    await speaker.idle();
    if (speaking !== current || shell.ended) return;
    speaking = null;
    recordResponse(current);
    await shell.proceed(after);
  }

  /** Barge-in: stop, tell the model what was heard, keep it. */
  function interrupted() {
    const current = speaking;
    if (!current) return;
    speaking = null;
    speaker.clear();
    stream.clear();
    const played = current.segments.reduce((sum, s) => sum + s.played, 0);
    const frames = current.segments.reduce((sum, s) => sum + s.frames, 0);
    session?.interrupt(current.itemId ? { itemId: current.itemId, audioMs: played * 20 } : undefined);
    const heard = playedWords(current.text, played, current.generated ? frames : Math.max(frames, played + 1));
    if (!heard || current.firstFrameAt === null) return;
    const entry: TranscriptEntry = { role: 'agent', text: heard, start_ms: since(current.firstFrameAt), end_ms: since(clock.now()), interrupted: true };
    if (current.turnEndAt !== null) entry.latency_ms = Math.round(current.firstFrameAt - current.turnEndAt);
    shell.record(entry);
  }

  // ---- response: the model's responses and the agent's tools ----------------------------------

  async function onFunctionCall(event: Extract<SpeechModelEvent, { type: 'function_call' }>) {
    // A function called in a response that is not the one speaking (a cancelled one) is not run.
    if (!toolbox || shell.ended || !speaking || speaking.id !== event.responseId) return;
    speaking.toolCalls++;
    const actionsBefore = toolbox.actions.length;
    const result = await held(clock, toolbox.run(event.name, event.arguments));
    if (shell.ended) return;
    for (const action of toolbox.actions.slice(actionsBefore)) {
      if (action.type === 'transfer_call') after = { kind: 'transfer', to: action.to, reason: action.reason };
      else if (action.type === 'end_call') after = { kind: 'end', reason: action.reason };
    }
    session?.functionResult(event.callId, result.output);
  }

  function onResponseStarted(responseId: string) {
    // The model answering what the caller said over an agent that may not be interrupted: as in
    // the cascade, that speech is no turn. The response is cancelled; its events are dropped
    // (they name a response that is not the one speaking).
    if (speaking && caller.turnEndAt !== null && !agent.interruptible) {
      caller.turnEndAt = null;
      return session?.interrupt();
    }
    // A response after one still playing (the answer after a function call) follows it; one that
    // replaces a response still being generated cuts it. The answer after a function call still
    // answers the caller's turn (its latency counts the tool).
    const turnEndAt = caller.turnEndAt ?? (speaking?.toolCalls ? speaking.turnEndAt : null);
    if (speaking?.generated) recordResponse(speaking);
    else if (speaking) interrupted();
    speaking = { id: responseId, itemId: null, segments: [], text: '', turnEndAt, firstFrameAt: null, generated: false, toolCalls: 0, carry: new Int16Array(0) };
    caller.turnEndAt = null;
  }

  function onResponseDone(event: Extract<SpeechModelEvent, { type: 'response_done' }>) {
    if (!speaking || speaking.id !== event.responseId) return;
    speaking.generated = true;
    if (speaking.carry.length > 0 && event.status !== 'cancelled') play(speaking, speaking.carry);
    speaking.carry = new Int16Array(0);
    // With function calls, the response their results ask for goes on from here.
    if ((event.status === 'completed' || event.status === 'incomplete') && speaking.toolCalls === 0) void completeResponse(speaking);
  }

  // ---- turn-taking and recognition: the model's VAD and transcription --------------------------

  function onSpeechStarted() {
    shell.callerActive();
    caller.since = clock.now();
    caller.endedAt = null;
    bargeInTimer?.cancel();
    if (speaking && agent.interruptible && shell.voicemail === 'none') bargeInTimer = shell.later(() => caller.since !== null && shell.signal({ type: 'barge_in' }), agent.barge_in_min_ms);
  }

  function onCallerTranscript(text: string) {
    shell.callerSpoke();
    const end = caller.endedAt ?? clock.now();
    shell.record({ role: 'user', text, start_ms: since(caller.since ?? end), end_ms: since(end) });
    const phrases = agent.end_call_phrases.filter((p) => p.trim() !== '');
    if (!after && phrases.some((p) => hasPhrase(text, p))) after = { kind: 'end', reason: 'caller_goodbye' };
    // The goodbye came after the agent had answered: nothing is left to say.
    if (after && !speaking && !speaker.busy) void shell.proceed(after);
  }

  function onModelEvent(event: SpeechModelEvent) {
    if (shell.ended) return;
    switch (event.type) {
      case 'speech_started':
        return onSpeechStarted();
      case 'speech_stopped':
        bargeInTimer?.cancel();
        caller.endedAt = clock.now();
        caller.turnEndAt = caller.endedAt;
        return;
      case 'user_transcript':
        if (event.final && event.text) onCallerTranscript(event.text);
        if (event.final) {
          caller.since = null;
          caller.endedAt = null;
        }
        return;
      case 'response_started':
        return onResponseStarted(event.responseId);
      case 'audio':
        return onAudio(event);
      case 'agent_transcript':
        if (speaking && speaking.id === event.responseId) speaking.text = event.text;
        return;
      case 'function_call':
        return void onFunctionCall(event);
      case 'response_done':
        return onResponseDone(event);
      case 'error':
        return shell.observer.error('llm_failed', event.message);
      case 'closed':
        shell.observer.error('llm_failed', `the speech model closed the session: ${event.reason}`);
        return shell.finish({ status: 'failed', endReason: 'media_error', error: { code: 'llm_failed', message: 'the speech model closed the session' } });
    }
  }

  async function open() {
    toolbox = deps.engine.toolsFor({ workspaceId: deps.workspaceId, agent, variables: deps.variables, now: deps.today });
    try {
      session = await held(
        clock,
        // Barge-in is the runtime's (after barge_in_min_ms, only when the agent is interruptible): the model must not cut itself.
        deps.model.open({ instructions: toolbox.instructions, voice: agent.voice, language: agent.language, tools: toolbox.specs, turnEndSilenceMs: agent.turn_end_silence_ms, interruptResponse: false }),
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      shell.observer.error('llm_failed', message);
      return shell.finish({ status: 'failed', endReason: 'media_error', error: { code: 'llm_failed', message: `the speech model could not be reached: ${message}` } });
    }
    if (shell.ended) return session.close();
    session.onEvent(onModelEvent);
    // The model hears the machine too: its message is left at once.
    if (shell.media.answeredBy === 'machine') return shell.leaveVoicemail();
    sayExactly(deps.engine.greet(agent, deps.variables).text);
  }

  function signal(s: CallSignal) {
    if (s.type === 'barge_in') return interrupted();
    if (s.type === 'voicemail' && speaking) {
      speaking = null;
      session?.interrupt();
    }
    if (s.type === 'transfer') speaking = null;
    if (s.type === 'end') {
      speaking = null;
      bargeInTimer?.cancel();
      session?.close();
    }
  }

  const hear = (frame: Int16Array) => {
    if (session && !session.sendAudio(frame) && !droppedAudio) {
      droppedAudio = true;
      shell.observer.error('llm_failed', 'the speech model does not keep up: caller audio dropped');
    }
  };

  return {
    stages: [{ frame: hear, signal }],
    start: () => void open(),
    say: (text, next) => {
      if (next) after = next;
      sayExactly(text);
    },
    typed: (text) => {
      const at = since(clock.now());
      shell.record({ role: 'user', text, start_ms: at, end_ms: at });
      if (speaking && agent.interruptible) shell.signal({ type: 'barge_in' });
      session?.sendText(text);
    },
    busy: () => speaking !== null || caller.since !== null,
  };
}
