import { held, type RuntimeClock, type RuntimeTimer } from '../../ports/clock.ts';
import type { CallMedia } from '../../ports/telephony.ts';
import type { After } from '../agent-turn.ts';
import type { CallAgent } from '../call-agent.ts';
import { latencySummary, type RecorderSink, type SessionObserver, type SessionOutcome, type TranscriptEntry } from '../outcome.ts';
import { createSpeaker, type Speaker } from '../speaker.ts';

// One live call as a pipeline (issue 31): a shell that owns what every call has — the clock's
// timers, the speaker (and its overflow failure), recording, the transcript, max duration, the
// transport's listeners (frames, typed text, DTMF, close, a late answering-machine verdict),
// silence ("still there?", then the end), what follows the agent's words, the outcome and the
// hang-up rule — and the stages plugged into it: turn-taking, recognition, response, speech
// (cascade: VAD → STT → engine → TTS; speech-to-speech: the model hears, thinks and speaks).
// Barge-in, a machine answering, a transfer and the end are signals every stage handles.

export const STILL_THERE_PROMPT = 'Are you still there?';
export const REPEAT_PROMPT = "Sorry, I didn't catch that. Could you say it again?";

/** What every stage is told; each reacts to what concerns it (stop a reply, clear audio, close a session). */
export type CallSignal =
  /** The caller spoke over the agent: what was not heard is dropped, what was heard kept. */
  | { type: 'barge_in' }
  /** A machine answered after the greeting started: stop talking (the shell then leaves the message or hangs up). */
  | { type: 'voicemail' }
  /** The call is being transferred (API, or the agent's words before it): stop talking. */
  | { type: 'transfer'; to: string }
  /** The call has ended: stop everything, close what is open. */
  | { type: 'end' };

export interface CallStage {
  /** One caller frame at clock time `atMs`, on the frame path: synchronous and cheap. */
  frame?(frame: Int16Array, atMs: number): void;
  signal?(signal: CallSignal): void;
}

/** What the assembly plugs into the shell: its stages and the two things only it knows. */
export interface PipelineParts {
  stages: CallStage[];
  /** The call is answered (after the listeners): greet, open a model, or wait for a machine's greeting. */
  start(): void;
  /** Says a fixed text (the "still there?" prompt, the voicemail message), then `after`. */
  say(text: string, after: After | null): void;
  /** Typed text standing in for speech (the media WebSocket's `{type:"text"}`), trimmed, not empty. */
  typed(text: string): void;
  /** The agent is talking or the caller has the floor: silence does not count. */
  busy(): boolean;
}

export interface PipelineDeps {
  clock: RuntimeClock;
  media: CallMedia;
  agent: CallAgent;
  observer: SessionObserver;
  recorder?: RecorderSink;
}

export type CallEnd = Omit<SessionOutcome, 'durationMs' | 'transcript' | 'latency'>;

/** What a stage may use of the call. */
export interface CallShell {
  readonly clock: RuntimeClock;
  readonly media: CallMedia;
  readonly agent: CallAgent;
  readonly observer: SessionObserver;
  readonly speaker: Speaker;
  readonly transcript: readonly TranscriptEntry[];
  readonly ended: boolean;
  /**
   * Voicemail: `pending` while a machine's greeting plays (it answered before the call started; the
   * message is left once its greeting ends), `leaving` while the message is said: nothing the
   * machine says interrupts or answers it.
   */
  readonly voicemail: 'none' | 'pending' | 'leaving';
  /** A machine answered: wait for its greeting to end before leaving the message. */
  awaitMachineGreeting(): void;
  /** The call's milliseconds since it was answered, of a clock time. */
  since(atMs: number): number;
  /** A timer on the call's clock, cancelled when the call ends. */
  later(fn: () => void, ms: number): RuntimeTimer;
  /** A transcript entry: kept, told to the observer and to the far end. */
  record(entry: TranscriptEntry): void;
  /** Tells every stage. */
  signal(signal: CallSignal): void;
  /** The caller stirred (speech started, a turn typed): the silence timer stops. */
  callerActive(): void;
  /** The caller took a turn: silence starts over with "still there?". */
  callerSpoke(): void;
  /** The agent's words are done: wait for the caller, or end, leave the voicemail, transfer. */
  proceed(after: After | null): Promise<void>;
  /** A machine answered and nothing is playing: the message is left, or the call hangs up. */
  leaveVoicemail(): void;
  finish(end: CallEnd): void;
  /** The failure of a reply over the audio bound. */
  overflow(message: string): void;
}

export function createCallPipeline(deps: PipelineDeps, build: (shell: CallShell) => PipelineParts) {
  const { clock, media, agent, observer } = deps;
  const { stream } = media;
  const transcript: TranscriptEntry[] = [];
  const timers = new Set<RuntimeTimer>();
  const answeredAt = clock.now();
  let silenceTimer: RuntimeTimer | null = null;
  let promptedStillThere = false;
  /** The far end closed the media (hang-up, transport failure): nothing to hang up. */
  let transportClosed = false;
  let voicemail: CallShell['voicemail'] = 'none';
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
  const overflow = (message: string) => finish({ status: 'failed', endReason: 'media_error', error: { code: 'media_error', message } });
  const speaker = createSpeaker({
    clock,
    stream,
    onFrame: (frame, atMs) => deps.recorder?.addAgent(since(atMs), frame),
    onOverflow: () => overflow('the transport could not keep up with the audio'),
  });

  const signal = (s: CallSignal) => {
    for (const stage of parts.stages) stage.signal?.(s);
  };

  function callerActive() {
    silenceTimer?.cancel();
    silenceTimer = null;
  }

  function armSilence() {
    silenceTimer?.cancel();
    silenceTimer = later(() => {
      silenceTimer = null;
      if (ended || parts.busy()) return;
      if (promptedStillThere) return finish({ status: 'completed', endReason: 'silence_timeout' });
      promptedStillThere = true;
      parts.say(STILL_THERE_PROMPT, null);
    }, agent.silence_timeout_seconds * 1000);
  }

  async function transfer(to: string, reason: string) {
    observer.transfer(to, reason);
    signal({ type: 'transfer', to });
    speaker.clear();
    await held(clock, media.transfer(to)).catch((error) => observer.error('transfer_failed', String(error)));
    finish({ status: 'transferred', endReason: 'transferred', transferredTo: to });
  }

  async function proceed(after: After | null) {
    if (ended) return;
    if (!after) return armSilence();
    if (after.kind === 'end') return finish({ status: 'completed', endReason: after.reason });
    if (after.kind === 'voicemail') return finish({ status: 'voicemail', endReason: 'voicemail' });
    await transfer(after.to, after.reason);
  }

  const voicemailMessage = () => agent.voicemail.message ?? `Hello, this is ${agent.name}. Please call us back.`;

  /** `cut`: the verdict came while the agent talked (its words stop) rather than before it said anything. */
  function leaveVoicemail(cut: boolean) {
    if (ended || voicemail === 'leaving') return;
    voicemail = 'leaving';
    signal({ type: 'voicemail' });
    if (cut) {
      speaker.clear();
      stream.clear();
    }
    callerActive();
    if (agent.voicemail.action === 'hangup') return finish({ status: 'voicemail', endReason: 'voicemail' });
    parts.say(voicemailMessage(), { kind: 'voicemail' });
  }

  function finish(end: CallEnd) {
    if (ended) return;
    ended = true;
    signal({ type: 'end' });
    callerActive();
    for (const timer of timers) timer.cancel();
    timers.clear();
    speaker.clear();
    // The far end that closed the media (hang-up, transport failure) needs no hang-up, nor a
    // transferred call; anything else that ends the call (a model or a reply that failed, a slow
    // transport, a rule) must not leave the caller on the line.
    if (!transportClosed && end.status !== 'transferred') void media.hangup(end.endReason).catch(() => undefined);
    resolveOutcome({ ...end, durationMs: since(clock.now()), transcript, latency: latencySummary(transcript) });
  }

  function record(entry: TranscriptEntry) {
    transcript.push(entry);
    observer.transcript(entry, transcript.length);
    stream.transcript?.({ role: entry.role, text: entry.text });
  }

  const shell: CallShell = {
    clock,
    media,
    agent,
    observer,
    speaker,
    transcript,
    get ended() {
      return ended;
    },
    get voicemail() {
      return voicemail;
    },
    awaitMachineGreeting: () => {
      voicemail = 'pending';
    },
    since,
    later,
    record,
    signal,
    callerActive,
    callerSpoke: () => {
      promptedStillThere = false;
    },
    proceed,
    leaveVoicemail: () => leaveVoicemail(false),
    finish,
    overflow,
  };
  const parts = build(shell);

  function listen() {
    stream.onFrame((frame) => {
      if (ended) return;
      const at = clock.now();
      deps.recorder?.addCaller(since(at), frame);
      for (const stage of parts.stages) stage.frame?.(frame, at);
    });
    stream.onText?.((text) => {
      if (!ended && text.trim()) parts.typed(text.trim());
    });
    stream.onDtmf?.((digit) => {
      if (ended) return;
      const at = since(clock.now());
      record({ role: 'user', text: digit, start_ms: at, end_ms: at, dtmf: true });
    });
    // A verdict after the greeting started (Twilio detects the end of the machine's message).
    media.onAnsweredBy?.((who) => {
      if (who === 'machine' && voicemail === 'none') leaveVoicemail(true);
    });
    stream.onClose((reason) => {
      transportClosed = true;
      if (reason.kind === 'hangup') return finish({ status: 'completed', endReason: 'customer_hangup' });
      observer.error('media_error', reason.message);
      finish({ status: 'failed', endReason: 'media_error', error: { code: 'media_error', message: reason.message } });
    });
  }

  return {
    shell,
    /** Starts the conversation; resolves with the outcome when the call has ended. */
    run(): Promise<SessionOutcome> {
      listen();
      later(() => finish({ status: 'completed', endReason: 'max_duration' }), agent.max_duration_seconds * 1000);
      parts.start();
      return outcome;
    },
    /** Ends the call from outside (API hang-up, empty wallet, lost ownership). */
    end(reason: 'api_hangup' | 'insufficient_balance') {
      finish({ status: 'completed', endReason: reason });
    },
    /** Transfers the call now (API transfer). */
    async transfer(to: string, reason = 'requested through the API') {
      if (!ended) await transfer(to, reason);
    },
    /** Clock milliseconds since the call was answered. */
    elapsedMs: () => since(clock.now()),
    get ended() {
      return ended;
    },
  };
}

export type CallPipeline = ReturnType<typeof createCallPipeline>;
