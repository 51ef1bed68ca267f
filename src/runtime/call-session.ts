import type { DialogueEngine, EngineAction } from '../engine/types.ts';
import type { Turn } from '../ports/llm.ts';
import { latencySummary, type RecorderSink, type SessionOutcome, type SessionObserver, type TranscriptEntry } from './outcome.ts';
import { held, type RuntimeClock, type RuntimeTimer } from '../ports/clock.ts';
import type { SpeechToText } from '../ports/stt.ts';
import type { CallMedia, SimulatedLatency } from '../ports/telephony.ts';
import type { TextToSpeech } from '../ports/tts.ts';
import type { CallAgent } from './call-agent.ts';
import { createSentenceStream, playedWords, splitSentences } from './sentence-stream.ts';
import { createSpeaker } from './speaker.ts';
import { type After, type AgentTurn, type Heard, NOTHING_HEARD, newAgentTurn } from './agent-turn.ts';
import { createEarlyTranscriber } from './early-transcript.ts';
import { timedPorts } from './timed-ports.ts';
import { NO_TRACE, type TraceSpan, type TurnTrace, traceActions, turnTrace } from './tracing.ts';
import { createTurnDetector, type Utterance } from './turn-detector.ts';

// One live call: the streamed turn loop of DESIGN "Call runtime" over a MediaStream. Caller frames
// → VAD → end of turn → STT → engine.respond (streamed) → sentences → TTS → frames paced out.
// Barge-in, silence, max duration, transfer, end call and voicemail live here; persistence does
// not (the observer is told, and the outcome is handed back at the end). No HTTP, no SQL, no vendor.

export const STILL_THERE_PROMPT = 'Are you still there?';
export const REPEAT_PROMPT = "Sorry, I didn't catch that. Could you say it again?";

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
  /** Simulated provider latencies (a sandbox call's `simulation.latency`), waited on the clock. */
  latency?: SimulatedLatency;
  /** The call's span (tracing port): a child per turn, and per stage under it. */
  trace?: TraceSpan;
}

export function createCallSession(deps: CallSessionDeps) {
  const { clock, media, agent } = deps;
  // The platform's work held on the clock (virtual sandbox time stands still for it), simulated latencies waited.
  const { stt, tts, engine } = timedPorts(clock, deps, deps.latency);
  const { stream } = media;
  const transcript: TranscriptEntry[] = [];
  const history: Turn[] = [];
  const timers = new Set<RuntimeTimer>();
  const answeredAt = clock.now();
  let turn: AgentTurn | null = null;
  let silenceTimer: RuntimeTimer | null = null;
  let promptedStillThere = false;
  let voicemailPending = media.answeredBy === 'machine';
  /** The message is being left on a machine: nothing it says interrupts or answers it. */
  let leavingVoicemail = false;
  let ended = false;
  let turnIndex = 0;
  const traceTurn = (startMs: number, kind: 'caller' | 'typed' | 'agent') => turnTrace(deps.trace ?? NO_TRACE, ++turnIndex, startMs, kind);
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

  // The words go to STT at a pause, unless the agent talked through them (too short to barge in: no turn).
  const transcriber = createEarlyTranscriber({ stt, now: clock.now, language: agent.language, pauseMs: deps.earlyTranscriptMs, turnEndSilenceMs: agent.turn_end_silence_ms, wanted: () => !turn || voicemailPending });
  const detector = createTurnDetector({
    isSpeech: deps.isSpeech,
    turnEndSilenceMs: agent.turn_end_silence_ms,
    onSpeechStart: () => {
      silenceTimer?.cancel();
      silenceTimer = null;
    },
    onSpeech: (speechMs) => {
      if (turn && agent.interruptible && speechMs >= agent.barge_in_min_ms && !voicemailPending && !leavingVoicemail) bargeIn();
    },
    onUtterance: (utterance) => void onUtterance(utterance),
    pause: transcriber.pause,
  });

  function record(entry: TranscriptEntry) {
    transcript.push(entry);
    history.push({ role: entry.role, text: entry.text });
    deps.observer.transcript(entry, transcript.length);
    stream.transcript?.({ role: entry.role, text: entry.text });
  }

  function armSilence() {
    silenceTimer?.cancel();
    silenceTimer = later(() => {
      silenceTimer = null;
      if (ended || turn) return;
      if (promptedStillThere) return finish({ status: 'completed', endReason: 'silence_timeout' });
      promptedStillThere = true;
      speak(STILL_THERE_PROMPT, null);
    }, agent.silence_timeout_seconds * 1000);
  }

  // ---- the agent's side -------------------------------------------------------------------

  /** Synthesises the turn's pending sentences one after another, queueing their audio. */
  async function synthesize(current: AgentTurn) {
    if (current.synthesizing) return;
    current.synthesizing = true;
    try {
      while (current.pending.length > 0 && turn === current && !ended) {
        const sentence = current.pending.shift() as string;
        const askedAt = clock.now();
        for await (const pcm of tts.synthesize(sentence, agent.voice, { signal: current.controller.signal })) {
          if (turn !== current || ended) return;
          if (current.timings && current.timings.tts_first_audio_ms === 0) current.timings.tts_first_audio_ms = Math.round(clock.now() - askedAt);
          current.trace.first('tts.first_audio', askedAt, clock.now());
          if (current.firstFrameAt === null) {
            void speaker.nextFrame().then((at) => {
              current.trace.firstFrame(at);
              if (current.firstFrameAt === null) current.firstFrameAt = at;
            });
          }
          const segment = speaker.enqueue(sentence, pcm);
          if (!segment) return finish({ status: 'failed', endReason: 'media_error', error: { code: 'media_error', message: 'the agent reply exceeded the audio bound' } });
          current.segments.push(segment);
        }
      }
    } catch (error) {
      if (turn === current && !ended) deps.observer.error('tts_failed', error instanceof Error ? error.message : String(error));
      if (turn === current && !ended) current.trace.fail('tts_failed');
    } finally {
      current.synthesizing = false;
    }
    if (turn === current && current.generated && current.pending.length === 0) void completeTurn(current);
  }

  /** Once the reply is generated, synthesised and played out: the transcript entry, then what follows. */
  async function completeTurn(current: AgentTurn) {
    await speaker.idle();
    if (turn !== current || ended) return;
    turn = null;
    current.trace.end(clock.now(), current.turnEndAt !== null && current.firstFrameAt !== null ? { latency_ms: Math.round(current.firstFrameAt - current.turnEndAt) } : undefined);
    const text = current.segments.map((s) => s.text).join(' ').trim();
    if (text) {
      const start = current.firstFrameAt ?? clock.now();
      const entry: TranscriptEntry = { role: 'agent', text, start_ms: since(start), end_ms: since(clock.now()) };
      if (current.turnEndAt !== null && current.firstFrameAt !== null) {
        entry.latency_ms = Math.round(current.firstFrameAt - current.turnEndAt);
        if (current.timings) entry.timings = current.timings;
      }
      record(entry);
      stream.mark(`agent-turn-${transcript.length}`);
    }
    const after = current.after;
    if (!after) return armSilence();
    if (after.kind === 'end') return finish({ status: 'completed', endReason: after.reason });
    if (after.kind === 'voicemail') return finish({ status: 'voicemail', endReason: 'voicemail' });
    deps.observer.transfer(after.to, after.reason);
    await held(clock, media.transfer(after.to)).catch((error) => deps.observer.error('transfer_failed', String(error)));
    finish({ status: 'transferred', endReason: 'transferred', transferredTo: after.to });
  }

  /** A fixed text (greeting, prompt, voicemail message) as an agent turn that answers nobody. */
  function speak(text: string, after: After | null) {
    const current = newAgentTurn(null, NOTHING_HEARD, traceTurn(clock.now(), 'agent'));
    turn = current;
    current.after = after;
    current.pending.push(...splitSentences(text));
    current.generated = true;
    void synthesize(current);
  }

  async function respond(userText: string, turnEndAt: number, heard: Heard, trace: TurnTrace) {
    const current = newAgentTurn(turnEndAt, heard, trace);
    turn = current;
    const askedAt = clock.now();
    const splitter = createSentenceStream((sentence) => {
      current.pending.push(sentence);
      void synthesize(current);
    });
    let result: { reply: string; actions: EngineAction[] };
    try {
      result = await engine.respond({
        workspaceId: deps.workspaceId,
        agent,
        history: history.slice(0, -1),
        userText,
        variables: deps.variables,
        signal: current.controller.signal,
        onReplyDelta: (fragment) => {
          if (turn !== current) return;
          if (current.timings && current.timings.llm_first_token_ms === 0) current.timings.llm_first_token_ms = Math.max(1, Math.round(clock.now() - askedAt));
          current.trace.first('llm.first_token', askedAt, clock.now());
          splitter.push(fragment);
        },
      });
    } catch (error) {
      if (turn !== current || ended) return;
      current.trace.fail('llm_failed');
      deps.observer.error('llm_failed', error instanceof Error ? error.message : String(error));
      result = { reply: REPEAT_PROMPT, actions: [] };
      splitter.push(REPEAT_PROMPT);
    }
    if (turn !== current || ended) return;
    traceActions(current.trace, result.actions, askedAt, clock.now());
    splitter.flush();
    for (const action of result.actions) {
      if (action.type === 'transfer_call') current.after = { kind: 'transfer', to: action.to, reason: action.reason };
      else if (action.type === 'end_call') current.after = { kind: 'end', reason: action.reason };
    }
    current.generated = true;
    if (!current.synthesizing) void synthesize(current);
  }

  /** The caller spoke over the agent: stop, drop what was not heard, keep what was. */
  function bargeIn() {
    const current = turn;
    if (!current) return;
    turn = null;
    current.trace.end(clock.now(), { interrupted: true });
    current.controller.abort();
    speaker.clear();
    stream.clear();
    const heard = current.segments
      .map((s) => playedWords(s.text, s.played, s.frames))
      .filter(Boolean)
      .join(' ')
      .trim();
    if (!heard || current.firstFrameAt === null) return;
    const entry: TranscriptEntry = { role: 'agent', text: heard, start_ms: since(current.firstFrameAt), end_ms: since(clock.now()), interrupted: true };
    if (current.turnEndAt !== null) {
      entry.latency_ms = Math.round(current.firstFrameAt - current.turnEndAt);
      if (current.timings) entry.timings = current.timings;
    }
    record(entry);
  }

  // ---- the caller's side ------------------------------------------------------------------

  async function onUtterance(utterance: Utterance) {
    // Speech while the agent talks that was too short to barge in (a cough, "mm-hm") is not a turn.
    if (ended || leavingVoicemail || (turn && !voicemailPending)) return transcriber.cancel();
    const turnEndAt = clock.now();
    const trace = traceTurn(utterance.endMs, 'caller');
    trace.stage('vad.end_of_turn', utterance.endMs, turnEndAt);    let text = '';
    let sttMs = 0;
    try {
      ({ text, sttMs } = await transcriber.transcribe(utterance.audio));
      text = text.trim();
      trace.stage('stt', turnEndAt, clock.now(), { stt_ms: sttMs, empty: !text });
    } catch (error) {
      trace.fail('stt_failed');
      trace.end(clock.now());
      if (ended) return;
      deps.observer.error('stt_failed', error instanceof Error ? error.message : String(error));
      if (!turn) speak(REPEAT_PROMPT, null);
      return;
    }
    // stt_wait_ms: what the turn waited for its words (less than the recogniser's time when asked early).
    const heard = { stt_ms: sttMs, stt_wait_ms: Math.round(clock.now() - turnEndAt) };
    if (ended || !text) return trace.end(clock.now());
    await takeTurn(text, { start_ms: since(utterance.startMs), end_ms: since(utterance.endMs) }, turnEndAt, heard, trace);
  }

  /** The caller's turn, heard or typed: into the transcript, then answered. */
  async function takeTurn(text: string, span: { start_ms: number; end_ms: number }, turnEndAt: number, heard: Heard, trace: TurnTrace) {
    promptedStillThere = false;
    record({ role: 'user', text, ...span });
    if (voicemailPending) {
      voicemailPending = false;
      trace.end(clock.now());
      return speak(voicemailMessage(), { kind: 'voicemail' });
    }
    await respond(text, turnEndAt, heard, trace);
  }

  /** Typed text standing in for speech (the media WebSocket's `{type:"text"}`): a turn at once, over the agent if it talks. */
  async function onTypedText(raw: string) {
    const text = raw.trim();
    if (ended || leavingVoicemail || !text) return;
    silenceTimer?.cancel();
    silenceTimer = null;
    if (turn) {
      if (!agent.interruptible) return;
      bargeIn();
    }
    const at = clock.now();
    await takeTurn(text, { start_ms: since(at), end_ms: since(at) }, at, NOTHING_HEARD, traceTurn(at, 'typed'));
  }

  /**
   * A machine answered (a verdict after the greeting started: Twilio detects the end of the
   * machine's message): stop talking, then hang up or leave the message after the beep.
   */
  function leaveVoicemail() {
    const current = turn;
    turn = null;
    current?.trace.end(clock.now(), { interrupted: true });
    current?.controller.abort();
    speaker.clear();
    stream.clear();
    silenceTimer?.cancel();
    if (agent.voicemail.action === 'hangup') return finish({ status: 'voicemail', endReason: 'voicemail' });
    leavingVoicemail = true;
    speak(voicemailMessage(), { kind: 'voicemail' });
  }

  const voicemailMessage = () => agent.voicemail.message ?? `Hello, this is ${agent.name}. Please call us back.`;

  // ---- the end ----------------------------------------------------------------------------

  function finish(end: Omit<SessionOutcome, 'durationMs' | 'transcript' | 'latency'>) {
    if (ended) return;
    ended = true;
    turn?.trace.end(clock.now(), { interrupted: true });
    turn?.controller.abort();
    turn = null;
    silenceTimer?.cancel();
    for (const timer of timers) timer.cancel();
    timers.clear();
    speaker.clear();
    if (end.endReason !== 'customer_hangup' && end.endReason !== 'media_error' && end.status !== 'transferred') {
      void media.hangup(end.endReason).catch(() => undefined);
    }
    resolveOutcome({ ...end, durationMs: since(clock.now()), transcript, latency: latencySummary(transcript) });
  }

  return {
    /** Starts the conversation; resolves with the outcome when the call has ended. */
    run(): Promise<SessionOutcome> {
      stream.onFrame((frame) => {
        if (ended) return;
        const at = clock.now();
        deps.recorder?.addCaller(since(at), frame);
        detector.feed(frame, at);
      });
      stream.onText?.((text) => void onTypedText(text));
      stream.onDtmf?.((digit) => {
        if (ended) return;
        const at = since(clock.now());
        record({ role: 'user', text: digit, start_ms: at, end_ms: at, dtmf: true });
      });
      media.onAnsweredBy?.((who) => {
        if (who === 'machine' && !ended && !voicemailPending && !leavingVoicemail) leaveVoicemail();
      });
      stream.onClose((reason) => {
        if (reason.kind === 'hangup') finish({ status: 'completed', endReason: 'customer_hangup' });
        else {
          deps.observer.error('media_error', reason.message);
          finish({ status: 'failed', endReason: 'media_error', error: { code: 'media_error', message: reason.message } });
        }
      });
      later(() => finish({ status: 'completed', endReason: 'max_duration' }), agent.max_duration_seconds * 1000);
      if (voicemailPending) {
        if (agent.voicemail.action === 'hangup') finish({ status: 'voicemail', endReason: 'voicemail' });
        // Otherwise wait for the machine's greeting to end (its utterance), then leave the message.
      } else {
        const greeting = engine.greet(agent, deps.variables);
        speak(greeting.text, null);
      }
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
      turn?.trace.end(clock.now(), { interrupted: true });
      turn?.controller.abort();
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

export type CallSession = ReturnType<typeof createCallSession>;
