import type { RuntimeClock, RuntimeTimer } from '../../ports/clock.ts';
import type { AudioCodec } from '../../ports/media.ts';
import type { CallMedia } from '../../ports/telephony.ts';
import type { After } from '../agent-turn.ts';
import type { CallAgent } from '../call-agent.ts';
import type { RecorderSink, SessionObserver, SessionOutcome, TranscriptEntry } from '../outcome.ts';
import { createSpeaker, type Speaker } from '../speaker.ts';
import { type CallEnd, type CallEnding, callEnding } from './call-end.ts';
import { callRules } from './call-rules.ts';

// One live call as a pipeline (issue 31): a shell that owns what every call has — the clock's
// timers, the speaker (and its overflow failure), recording, the transcript, max duration, the
// transport's listeners (frames, typed text, DTMF, close, a late answering-machine verdict),
// silence ("still there?", then the end), what follows the agent's words, the outcome and the
// hang-up rule — and the stages plugged into it: turn-taking, recognition, response, speech
// (cascade: VAD → STT → engine → TTS; speech-to-speech: the model hears, thinks and speaks).
// Barge-in, a machine answering, a transfer and the end are signals every stage handles.
// The caller's audio comes as PCM16 16 kHz frames, or — a call whose stages take the transport's
// own μ-law (`codec: 'mulaw'`, a speech model on a carrier) — as that μ-law, untouched: the shell
// then records it as it is and the speaker writes μ-law frames.

export { STILL_THERE_PROMPT } from './call-rules.ts';
export type { CallEnd } from './call-end.ts';
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
  /** The caller's μ-law as the transport gave it, in place of `frame` on a `mulaw` call. */
  mulaw?(mulaw: Uint8Array, atMs: number): void;
  signal?(signal: CallSignal): void;
}

/** What the assembly plugs into the shell: its stages and the two things only it knows. */
export interface PipelineParts {
  stages: CallStage[];
  /**
   * The call is answered (after the listeners): greet, open a model, or wait for a machine's
   * greeting; resolves once a voicemail message could be said (a model is open).
   */
  start(): void | Promise<void>;
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
  /** `mulaw`: the stages take and give the transport's own μ-law (only when its stream has `mulaw`). */
  codec?: AudioCodec;
}

/** What a stage may use of the call. */
export interface CallShell {
  readonly clock: RuntimeClock;
  readonly media: CallMedia;
  /** The audio the stages take and give (`mulaw` only on a transport that has it). */
  readonly codec: AudioCodec;
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
  /**
   * A machine verdict came after the answer but before the call started (Twilio's asynchronous
   * detection outrunning a loaded machine): its greeting is over, the message is left at once.
   */
  readonly machineHeard: boolean;
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

/** The transport's listeners: caller frames to the recorder and the stages, typed text, DTMF, the close. */
function listen(shell: CallShell, parts: PipelineParts, ending: CallEnding, deps: PipelineDeps) {
  const { stream } = shell.media;
  if (shell.codec === 'mulaw' && stream.mulaw) {
    stream.mulaw.onAudio((mulaw) => {
      if (ending.ended) return;
      const at = shell.clock.now();
      deps.recorder?.addCallerMulaw(ending.since(at), mulaw);
      for (const stage of parts.stages) stage.mulaw?.(mulaw, at);
    });
  } else {
    stream.onFrame((frame) => {
      if (ending.ended) return;
      const at = shell.clock.now();
      deps.recorder?.addCaller(ending.since(at), frame);
      for (const stage of parts.stages) stage.frame?.(frame, at);
    });
  }
  stream.onText?.((text) => {
    if (!ending.ended && text.trim()) parts.typed(text.trim());
  });
  stream.onDtmf?.((digit) => {
    if (ending.ended) return;
    const at = ending.since(shell.clock.now());
    shell.record({ role: 'user', text: digit, start_ms: at, end_ms: at, dtmf: true });
  });
  stream.onClose((reason) => {
    ending.closedByFarEnd();
    if (reason.kind === 'hangup') return ending.finish({ status: 'completed', endReason: 'customer_hangup' });
    shell.observer.error('media_error', reason.message);
    ending.finish({ status: 'failed', endReason: 'media_error', error: { code: 'media_error', message: reason.message } });
  });
}

export function createCallPipeline(deps: PipelineDeps, build: (shell: CallShell) => PipelineParts) {
  const { clock, media, agent, observer } = deps;
  const signal = (s: CallSignal) => {
    for (const stage of parts.stages) stage.signal?.(s);
  };
  const ending = callEnding(clock, media, () => {
    signal({ type: 'end' });
    rules.callerActive();
    speaker.clear();
  });
  const overflow = (message: string) => ending.finish({ status: 'failed', endReason: 'media_error', error: { code: 'media_error', message } });
  const speaker = createSpeaker({
    clock,
    stream: media.stream,
    onFrame: (frame, atMs) => (frame instanceof Uint8Array ? deps.recorder?.addAgentMulaw(ending.since(atMs), frame) : deps.recorder?.addAgent(ending.since(atMs), frame)),
    onOverflow: () => overflow('the transport could not keep up with the audio'),
  });
  const rules = callRules({ clock, media, agent, observer, speaker, signal }, ending, () => parts);
  let started = false;
  let verdictBeforeStart = false;
  const shell: CallShell = {
    clock,
    media,
    codec: deps.codec === 'mulaw' && media.stream.mulaw ? 'mulaw' : 'pcm16',
    agent,
    observer,
    speaker,
    transcript: ending.transcript,
    get ended() {
      return ending.ended;
    },
    get voicemail() {
      return rules.voicemail;
    },
    get machineHeard() {
      return verdictBeforeStart;
    },
    awaitMachineGreeting: rules.awaitMachineGreeting,
    since: ending.since,
    later: ending.later,
    record: (entry) => {
      ending.transcript.push(entry);
      observer.transcript(entry, ending.transcript.length);
      media.stream.transcript?.({ role: entry.role, text: entry.text });
    },
    signal,
    callerActive: rules.callerActive,
    callerSpoke: rules.callerSpoke,
    proceed: rules.proceed,
    leaveVoicemail: () => rules.leaveVoicemail(false),
    finish: ending.finish,
    overflow,
  };
  const parts = build(shell);

  return {
    shell,
    /** Starts the conversation; resolves with the outcome when the call has ended. */
    run(): Promise<SessionOutcome> {
      listen(shell, parts, ending, deps);
      ending.later(() => ending.finish({ status: 'completed', endReason: 'max_duration' }), agent.max_duration_seconds * 1000);
      // A verdict after the answer (Twilio's asynchronous detection): before the call has started
      // (a model still opening, or it came before the media) the start reads it and leaves the
      // message instead of greeting; after, it cuts the agent's words.
      media.onAnsweredBy?.((who) => {
        if (who !== 'machine') return;
        if (!started) verdictBeforeStart = true;
        else if (rules.voicemail === 'none') rules.leaveVoicemail(true);
      });
      const begun = () => {
        started = true;
      };
      void Promise.resolve(parts.start()).then(begun, begun);
      return ending.outcome;
    },
    /** Ends the call from outside (API hang-up, empty wallet, lost ownership). */
    end(reason: 'api_hangup' | 'insufficient_balance') {
      ending.finish({ status: 'completed', endReason: reason });
    },
    /** Transfers the call now (API transfer). */
    async transfer(to: string, reason = 'requested through the API') {
      if (!ending.ended) await rules.transfer(to, reason);
    },
    /** Clock milliseconds since the call was answered. */
    elapsedMs: () => ending.since(clock.now()),
    get ended() {
      return ending.ended;
    },
  };
}

export type CallPipeline = ReturnType<typeof createCallPipeline>;
