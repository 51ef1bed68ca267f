import { hasPhrase } from '../platform/text.ts';
import type { AgentToolbox, DialogueEngine } from '../engine/types.ts';
import type { After } from './agent-turn.ts';
import { concatPcm, FRAME_SAMPLES } from '../platform/audio/frames.ts';
import { held, type RuntimeClock, type RuntimeTimer } from '../ports/clock.ts';
import type { SpeechModel, SpeechModelEvent, SpeechModelSession } from '../ports/speech-model.ts';
import type { CallMedia } from '../ports/telephony.ts';
import type { CallAgent } from './call-agent.ts';
import { STILL_THERE_PROMPT } from './call-session.ts';
import { latencySummary, type RecorderSink, type SessionObserver, type SessionOutcome, type TranscriptEntry } from './outcome.ts';
import { playedWords } from './sentence-stream.ts';
import { createSpeaker, type SpokenSegment } from './speaker.ts';

// One live call whose agent thinks in speech (`llm.provider: "openai-realtime"`): the caller's
// frames go to the model as they come, the model's VAD ends the caller's turn, and its audio is
// paced out by the same speaker as a cascade call's. The rules of a call stay the runtime's:
// barge-in after `barge_in_min_ms` of the caller's speech (the model is told where it was cut),
// the agent's tools run by the engine (functions, knowledge, transfer, end call), end-call
// phrases, "still there?" then the end after silence, max duration, voicemail, the transcript with
// per-turn latency (the model's end of the caller's turn → the first agent frame written).
// Same interface and outcome as createCallSession; no HTTP, no SQL, no vendor.

export interface SpeechModelCallDeps {
  clock: RuntimeClock;
  media: CallMedia;
  model: SpeechModel;
  engine: DialogueEngine;
  agent: CallAgent;
  workspaceId: string;
  variables: Record<string, string>;
  observer: SessionObserver;
  recorder?: RecorderSink;
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

export function createSpeechModelCall(deps: SpeechModelCallDeps) {
  const { clock, media, agent } = deps;
  const { stream } = media;
  const transcript: TranscriptEntry[] = [];
  const timers = new Set<RuntimeTimer>();
  const answeredAt = clock.now();
  let session: SpeechModelSession | null = null;
  let toolbox: AgentToolbox | null = null;
  let speaking: Speaking | null = null;
  /** What follows once the agent's current words are played (a tool ended the call, or a phrase). */
  let after: After | null = null;
  let callerSince: number | null = null;
  let lastTurnEndAt: number | null = null;
  let bargeInTimer: RuntimeTimer | null = null;
  let silenceTimer: RuntimeTimer | null = null;
  let promptedStillThere = false;
  let droppedAudio = false;
  /** The far end closed the media (hang-up, transport failure): nothing to hang up. */
  let transportClosed = false;
  let ended = false;
  let resolveOutcome!: (outcome: SessionOutcome) => void;
  const outcome = new Promise<SessionOutcome>((resolve) => {
    resolveOutcome = resolve;
  });

  const since = (atMs: number) => Math.max(0, Math.round(atMs - answeredAt));
  const later = (fn: () => void, ms: number) => {
    const timer = clock.setTimer(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
    return timer;
  };
  const speaker = createSpeaker({
    clock,
    stream,
    onFrame: (frame, atMs) => deps.recorder?.addAgent(since(atMs), frame),
    onOverflow: () => finish({ status: 'failed', endReason: 'media_error', error: { code: 'media_error', message: 'the transport could not keep up with the audio' } }),
  });

  function record(entry: TranscriptEntry) {
    transcript.push(entry);
    deps.observer.transcript(entry, transcript.length);
    stream.transcript?.({ role: entry.role, text: entry.text });
  }

  const sayExactly = (text: string) => session?.respond(`Say exactly this and nothing else: "${text}"`);

  function armSilence() {
    silenceTimer?.cancel();
    silenceTimer = later(() => {
      silenceTimer = null;
      if (ended || speaking || callerSince !== null) return;
      if (promptedStillThere) return finish({ status: 'completed', endReason: 'silence_timeout' });
      promptedStillThere = true;
      sayExactly(STILL_THERE_PROMPT);
    }, agent.silence_timeout_seconds * 1000);
  }

  // ---- the agent's side -------------------------------------------------------------------

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
    if (!segment) return finish({ status: 'failed', endReason: 'media_error', error: { code: 'media_error', message: 'the agent reply exceeded the audio bound' } });
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
    record(entry);
    stream.mark(`agent-turn-${transcript.length}`);
  }

  /** The response is generated and played out: its transcript entry, then what follows. */
  async function completeResponse(current: Speaking) {
    await speaker.idle();
    if (speaking !== current || ended) return;
    speaking = null;
    recordResponse(current);
    await proceed();
  }

  /** After the agent's words: wait for the caller, or end, leave the voicemail, transfer. */
  async function proceed() {
    if (!after) return armSilence();
    const next = after;
    if (next.kind === 'end') return finish({ status: 'completed', endReason: next.reason });
    if (next.kind === 'voicemail') return finish({ status: 'voicemail', endReason: 'voicemail' });
    deps.observer.transfer(next.to, next.reason);
    await held(clock, media.transfer(next.to)).catch((error) => deps.observer.error('transfer_failed', String(error)));
    finish({ status: 'transferred', endReason: 'transferred', transferredTo: next.to });
  }

  async function onFunctionCall(event: Extract<SpeechModelEvent, { type: 'function_call' }>) {
    // A function called in a response that is not the one speaking (a cancelled one) is not run.
    if (!toolbox || ended || !speaking || speaking.id !== event.responseId) return;
    speaking.toolCalls++;
    const actionsBefore = toolbox.actions.length;
    const result = await held(clock, toolbox.run(event.name, event.arguments));
    if (ended) return;
    for (const action of toolbox.actions.slice(actionsBefore)) {
      if (action.type === 'transfer_call') after = { kind: 'transfer', to: action.to, reason: action.reason };
      else if (action.type === 'end_call') after = { kind: 'end', reason: action.reason };
    }
    session?.functionResult(event.callId, result.output);
  }

  /** The caller spoke over the agent for `barge_in_min_ms`: stop, tell the model what was heard, keep it. */
  function bargeIn() {
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
    record(entry);
  }

  // ---- the caller's side and the model's events ---------------------------------------------

  function onCallerTranscript(text: string) {
    promptedStillThere = false;
    const end = lastTurnEndAt ?? clock.now();
    record({ role: 'user', text, start_ms: since(callerSince ?? end), end_ms: since(end) });
    const phrases = agent.end_call_phrases.filter((p) => p.trim() !== '');
    if (!after && phrases.some((p) => hasPhrase(text, p))) after = { kind: 'end', reason: 'caller_goodbye' };
    // The goodbye came after the agent had answered: nothing is left to say.
    if (after && !speaking && !speaker.busy) void proceed();
  }

  function onModelEvent(event: SpeechModelEvent) {
    if (ended) return;
    let turnEndAt: number | null;
    switch (event.type) {
      case 'speech_started':
        silenceTimer?.cancel();
        silenceTimer = null;
        callerSince = clock.now();
        bargeInTimer?.cancel();
        if (speaking && agent.interruptible) bargeInTimer = later(() => callerSince !== null && bargeIn(), agent.barge_in_min_ms);
        return;
      case 'speech_stopped':
        bargeInTimer?.cancel();
        lastTurnEndAt = clock.now();
        return;
      case 'user_transcript':
        if (event.final && event.text) onCallerTranscript(event.text);
        if (event.final) callerSince = null;
        return;
      case 'response_started':
        // The model answering what the caller said over an agent that may not be interrupted: as in
        // the cascade, that speech is no turn. The response is cancelled; its events are dropped
        // (they name a response that is not the one speaking).
        if (speaking && lastTurnEndAt !== null && !agent.interruptible) {
          lastTurnEndAt = null;
          return session?.interrupt();
        }
        // A response after one still playing (the answer after a function call) follows it;
        // one that replaces a response still being generated cuts it.
        // The answer after a function call still answers the caller's turn (its latency counts the tool).
        turnEndAt = lastTurnEndAt ?? (speaking?.toolCalls ? speaking.turnEndAt : null);
        if (speaking?.generated) recordResponse(speaking);
        else if (speaking) bargeIn();
        speaking = { id: event.responseId, itemId: null, segments: [], text: '', turnEndAt, firstFrameAt: null, generated: false, toolCalls: 0, carry: new Int16Array(0) };
        lastTurnEndAt = null;
        return;
      case 'audio':
        return onAudio(event);
      case 'agent_transcript':
        if (speaking && speaking.id === event.responseId) speaking.text = event.text;
        return;
      case 'function_call':
        return void onFunctionCall(event);
      case 'response_done':
        if (speaking && speaking.id === event.responseId) {
          speaking.generated = true;
          if (speaking.carry.length > 0 && event.status !== 'cancelled') play(speaking, speaking.carry);
          speaking.carry = new Int16Array(0);
          // With function calls, the response their results ask for goes on from here.
          if ((event.status === 'completed' || event.status === 'incomplete') && speaking.toolCalls === 0) void completeResponse(speaking);
        }
        return;
      case 'error':
        return deps.observer.error('llm_failed', event.message);
      case 'closed':
        deps.observer.error('llm_failed', `the speech model closed the session: ${event.reason}`);
        return finish({ status: 'failed', endReason: 'media_error', error: { code: 'llm_failed', message: 'the speech model closed the session' } });
    }
  }

  // ---- the end ----------------------------------------------------------------------------

  function finish(end: Omit<SessionOutcome, 'durationMs' | 'transcript' | 'latency'>) {
    if (ended) return;
    ended = true;
    speaking = null;
    silenceTimer?.cancel();
    bargeInTimer?.cancel();
    for (const timer of timers) timer.cancel();
    timers.clear();
    speaker.clear();
    session?.close();
    // A model that failed leaves the caller on the line: hang up (unlike a transport that failed).
    if (!transportClosed && end.status !== 'transferred') void media.hangup(end.endReason).catch(() => undefined);
    resolveOutcome({ ...end, durationMs: since(clock.now()), transcript, latency: latencySummary(transcript) });
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
      deps.observer.error('llm_failed', message);
      return finish({ status: 'failed', endReason: 'media_error', error: { code: 'llm_failed', message: `the speech model could not be reached: ${message}` } });
    }
    if (ended) return session.close();
    session.onEvent(onModelEvent);
    if (media.answeredBy === 'machine') {
      if (agent.voicemail.action === 'hangup') return finish({ status: 'voicemail', endReason: 'voicemail' });
      after = { kind: 'voicemail' };
      return sayExactly(agent.voicemail.message ?? `Hello, this is ${agent.name}. Please call us back.`);
    }
    sayExactly(deps.engine.greet(agent, deps.variables).text);
  }

  return {
    /** Starts the conversation; resolves with the outcome when the call has ended. */
    run(): Promise<SessionOutcome> {
      stream.onFrame((frame) => {
        if (ended) return;
        deps.recorder?.addCaller(since(clock.now()), frame);
        if (session && !session.sendAudio(frame) && !droppedAudio) {
          droppedAudio = true;
          deps.observer.error('llm_failed', 'the speech model does not keep up: caller audio dropped');
        }
      });
      stream.onText?.((text) => {
        if (ended || !text.trim()) return;
        const at = since(clock.now());
        record({ role: 'user', text: text.trim(), start_ms: at, end_ms: at });
        if (speaking && agent.interruptible) bargeIn();
        session?.sendText(text.trim());
      });
      stream.onDtmf?.((digit) => {
        if (ended) return;
        const at = since(clock.now());
        record({ role: 'user', text: digit, start_ms: at, end_ms: at, dtmf: true });
      });
      stream.onClose((reason) => {
        transportClosed = true;
        if (reason.kind === 'hangup') finish({ status: 'completed', endReason: 'customer_hangup' });
        else {
          deps.observer.error('media_error', reason.message);
          finish({ status: 'failed', endReason: 'media_error', error: { code: 'media_error', message: reason.message } });
        }
      });
      later(() => finish({ status: 'completed', endReason: 'max_duration' }), agent.max_duration_seconds * 1000);
      void open();
      return outcome;
    },
    /** Ends the call from outside (API hang-up, empty wallet, lost ownership). */
    end(reason: 'api_hangup' | 'insufficient_balance') {
      finish({ status: 'completed', endReason: reason });
    },
    /** Transfers the call now (API transfer). */
    async transfer(to: string, reason = 'requested through the API') {
      if (ended) return;
      deps.observer.transfer(to, reason);
      speaker.clear();
      await held(clock, media.transfer(to)).catch((error) => deps.observer.error('transfer_failed', String(error)));
      finish({ status: 'transferred', endReason: 'transferred', transferredTo: to });
    },
    /** Clock milliseconds since the call was answered. */
    elapsedMs: () => since(clock.now()),
    get ended() {
      return ended;
    },
  };
}
