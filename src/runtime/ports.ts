// The ports of the call runtime, owned by it (adapters in src/providers/ implement them). The
// runtime speaks PCM16 mono 16 kHz in frames of 20 ms; adapters convert at the edge. Nothing here
// knows HTTP, SQL or a vendor.
import type { EngineAgent } from '../engine/types.ts';
import type { SessionEndReason } from './outcome.ts';

/** Time as the runtime sees it: milliseconds, virtual on a sandbox call (virtual-clock.ts), real elsewhere. */
export interface RuntimeClock {
  /** Milliseconds since an arbitrary origin, monotonic. */
  now(): number;
  /** Calls `fn` after `ms` of this clock's time. */
  setTimer(fn: () => void, ms: number): RuntimeTimer;
  /** Real milliseconds per millisecond of this clock (1 in real time, 1/50 at SANDBOX_SPEED 50, 0 at `max`). */
  readonly scale: number;
  /**
   * The platform computes: on a virtual clock time stands still until `work` settles (a sandbox
   * call's timeline then owes nothing to the machine's load). Absent on a real clock.
   */
  hold?<T>(work: Promise<T>): Promise<T>;
}

export interface RuntimeTimer {
  cancel(): void;
}

/** Why the far end closed the media: the caller hung up, or the transport failed. */
export type MediaCloseReason = { kind: 'hangup' } | { kind: 'error'; message: string };

/** One live audio connection: frames in, frames out, playback control. */
export interface MediaStream {
  /** Registers the receiver of the caller's frames (320 samples each). */
  onFrame(listener: (frame: Int16Array) => void): void;
  /** Registers the receiver of marks the far end has played (see `mark`). */
  onMark(listener: (name: string) => void): void;
  /** Registers the receiver of keypad digits the caller pressed (Twilio `dtmf`), when the transport has them. */
  onDtmf?(listener: (digit: string) => void): void;
  /** Registers the receiver of typed text standing in for speech (the media WebSocket's `{type:"text"}`). */
  onText?(listener: (text: string) => void): void;
  /** Tells the far end each transcript line as it is written (the media WebSocket's `transcript`). */
  transcript?(line: { role: 'agent' | 'user'; text: string }): void;
  /** Registers the receiver of the far end closing (hang-up or media failure); called at most once. */
  onClose(listener: (reason: MediaCloseReason) => void): void;
  /**
   * Writes one agent frame. Returns false when the transport is over its bound (a slow peer).
   * `delayMs` (real milliseconds from now), only for a transport with `leadMs`: when the frame is due.
   */
  send(frame: Int16Array, delayMs?: number): boolean;
  /**
   * Set when the transport plays frames at their time by itself (off the event loop): the speaker
   * hands it frames up to this many real milliseconds before they are due, with their delay, and
   * `clear` drops those not yet written. The event loop's pauses then cost the audio nothing.
   */
  readonly leadMs?: number;
  /** Tells the far end that the agent's audio up to here belongs to `name` (Twilio `mark`). */
  mark(name: string): void;
  /** Stops playback of what was sent and not yet played (barge-in; Twilio `clear`). */
  clear(): void;
  /** Closes the media from our side. */
  close(): void;
}

export interface SpeechToText {
  /** The text of one caller utterance (PCM16 16 kHz), or '' when nothing was said. */
  transcribe(audio: Int16Array, options: { language: string; signal?: AbortSignal }): Promise<string>;
  /** Each request stands alone (no order between them): an utterance may be sent early and the answer dropped. */
  readonly stateless?: boolean;
}

export interface TextToSpeech {
  /** Speaks `text` in `voice`: PCM16 16 kHz chunks as they are produced. */
  synthesize(text: string, voice: string, options?: { signal?: AbortSignal }): AsyncIterable<Int16Array>;
}

/** A connected call as the telephony adapter hands it over. */
export interface CallMedia {
  stream: MediaStream;
  /** The adapter's own recogniser (the sandbox passes the simulated caller's text through); else the deployment's. */
  stt?: SpeechToText;
  /** The call's own clock (a sandbox call's virtual time); else the deployment's real one. */
  clock?: RuntimeClock;
  /** Simulated provider latencies of a sandbox call (`simulation.latency`). */
  latency?: SimulatedLatency;
  /** `machine` when an answering machine picked up (voicemail handling). */
  answeredBy: 'human' | 'machine';
  /**
   * Registers the receiver of a verdict that arrives after the media started (Twilio's asynchronous
   * answering-machine detection): `machine` turns the call to voicemail handling.
   */
  onAnsweredBy?(listener: (who: 'human' | 'machine') => void): void;
  /** Hands the call to `to` (the media ends after it). */
  transfer(to: string): Promise<void>;
  /** Ends the call from our side; `reason` is why the session ended (the web transport tells its client). */
  hangup(reason?: SessionEndReason): Promise<void>;
}

export type DialOutcome = { kind: 'answered'; media: CallMedia } | { kind: 'busy' } | { kind: 'no_answer' } | { kind: 'failed'; message: string };

export interface DialRequest {
  callId: string;
  from: string;
  to: string;
  /** `simulation` of the call (sandbox: the caller script, simulated latencies). */
  simulation: CallSimulation | null;
  signal: AbortSignal;
  /** The agent is a real-time service (a speech-to-speech model): a simulated call runs on real time, not virtual time. */
  realTime?: boolean;
}

export interface InboundRequest {
  callId: string;
  from: string;
  to: string;
  simulation: CallSimulation | null;
  /** As DialRequest.realTime. */
  realTime?: boolean;
}

export interface SimulatedLatency {
  /** Added to each recognition, after the recogniser answered. */
  stt_ms?: number;
  /** Before the engine is asked (its first token comes this late). */
  llm_first_token_ms?: number;
  /** Before each synthesis' first audio. */
  tts_first_audio_ms?: number;
}

/** A sandbox call's simulation: the callee's lines and the providers' simulated latencies. */
export interface CallSimulation {
  caller_script?: CallerUtterance[];
  latency?: SimulatedLatency;
}

/** The sandbox caller's lines: said after the agent's turn, or `interrupt_after_ms` into it (barge-in). */
export type CallerUtterance = string | { text: string; interrupt_after_ms: number };

export interface TelephonyProvider {
  readonly name: string;
  /** Places an outbound call; resolves when it is answered or has failed. */
  dial(request: DialRequest): Promise<DialOutcome>;
}

/** The agent as a live call runs it. */
export interface CallAgent extends EngineAgent {
  voice: string;
  max_duration_seconds: number;
  voicemail: { action: 'hangup' | 'leave_message'; message: string | null };
  turn_end_silence_ms: number;
  barge_in_min_ms: number;
  interruptible: boolean;
  silence_timeout_seconds: number;
}
