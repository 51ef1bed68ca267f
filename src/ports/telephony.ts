// The telephony port: places and answers calls and hands each connected call to the runtime as
// CallMedia (its audio stream, its recogniser and clock when it brings its own). Implemented by
// src/providers/telephony/ (the sandbox simulates the callee, Twilio dials for real); consumed by
// the call runtime and modules/calls. Nothing here knows HTTP, SQL or a vendor.
import type { RuntimeClock } from './clock.ts';
import type { MediaStream } from './media.ts';
import type { SpeechToText } from './stt.ts';
import type { WebSocket } from 'ws';

/** Why a session ended, as the runtime records it (the web transport tells its client on hang-up). */
export type SessionEndReason =
  | 'caller_goodbye'
  | 'customer_hangup'
  | 'agent_end_call'
  | 'transferred'
  | 'voicemail'
  | 'media_error'
  | 'api_hangup'
  | 'max_duration'
  | 'insufficient_balance'
  | 'silence_timeout';

/** The caller id the sandbox provides when a call names none. */
export const SANDBOX_CALLER_ID = '+15550100001';

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

/**
 * What a telephony adapter can do, said as flags so that its consumers never ask for its name.
 * `simulated`: no carrier and no account (the sandbox): every call brings its own callee, and the
 * demo says so. `ownsCallerIds`: a call's caller id must be one of the workspace's numbers (the
 * carrier's); otherwise the adapter provides its own (SANDBOX_CALLER_ID). `inbound`: inbound calls
 * may be placed through the API, from a simulated caller (`acceptInbound`); a carrier's own inbound
 * calls come through its webhooks instead.
 */
export interface TelephonyCapabilities {
  readonly simulated: boolean;
  readonly ownsCallerIds: boolean;
  readonly inbound: boolean;
}

interface TelephonyBase extends TelephonyCapabilities {
  /** The adapter's name: recorded as each call's `provider`, said by the media health report. */
  readonly name: string;
  /** Places an outbound call; resolves when it is answered or has failed. */
  dial(request: DialRequest): Promise<DialOutcome>;
  /** One small request proving a real carrier answers (the media health check); absent when there is nothing to reach. */
  probe?(): Promise<void>;
  /** A carrier's webhooks and media streams (modules/telephony serves them); absent for the sandbox. */
  readonly webhooks?: CarrierWebhooks;
}

/** The telephony port: a simulated one places inbound calls from the API too (`inbound`). */
export type TelephonyProvider = TelephonyBase & ({ readonly inbound: true; acceptInbound(request: InboundRequest): CallMedia } | { readonly inbound: false });

/** The sandbox: dials simulated callees, and answers inbound calls from simulated callers. */
export type SandboxTelephony = TelephonyBase & {
  readonly name: 'sandbox';
  readonly simulated: true;
  readonly ownsCallerIds: false;
  readonly inbound: true;
  /** An inbound call to one of the workspace's numbers, from a simulated caller. */
  acceptInbound(request: InboundRequest): CallMedia;
};

// A carrier's webhooks and media streams: modules/telephony serves them at
// /v1/telephony/<carrier>/voice, /status and /stream and keeps the call journal; the adapter speaks
// the carrier's protocol (its signatures, its answers, its statuses, its media framing).

/** How the API declares a carrier's webhooks (openapi.json lists every registered carrier's, whichever runs). */
export interface CarrierWebhookDescription {
  /** The carrier's segment of its paths: /v1/telephony/<carrier>/…, and its TELEPHONY_PROVIDER value. */
  readonly carrier: string;
  /** Its name in messages ("Twilio"). */
  readonly displayName: string;
  readonly operationIds: { readonly voice: string; readonly status: string; readonly stream: string };
  readonly summaries: { readonly voice: string; readonly status: string };
  /** What its form parameters are. */
  readonly paramsDescription: string;
  /** The header carrying its signature ("X-Twilio-Signature"), and what it signs. */
  readonly signatureHeader: { readonly name: string; readonly description: string };
  /** The voice webhook's answer: its content type and what it is. */
  readonly voiceResponse: { readonly type: string; readonly description: string };
}

/** One of the carrier's requests as the telephony module received it (a form post, or a stream's handshake). */
export interface CarrierRequest {
  /** The path and query string the carrier called (it signs its public address of them). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  params: Record<string, string>;
  /** Our call id, on the callbacks of the calls we placed. */
  callId?: string;
}

/** What the voice webhook asks about: a new call to one of our numbers, or a call we placed, now answered. */
export type VoiceWebhook =
  | { kind: 'inbound'; carrierCallId: string; from: string; to: string }
  | { kind: 'answered'; carrierCallId: string; callId: string }
  | { kind: 'unknown' };

/** A carrier's call statuses that end a call before it is answered; `progress` is any other. */
export const CARRIER_FINAL_STATUSES = ['busy', 'no_answer', 'failed', 'canceled', 'completed'] as const;
export type CarrierCallStatus = (typeof CARRIER_FINAL_STATUSES)[number] | 'progress';

/** What a status callback says: the call's status, or who answered (an answering-machine verdict). */
export type CallEvent = { kind: 'status'; status: CarrierCallStatus } | { kind: 'answered_by'; who: 'human' | 'machine' };

/** A status callback: the call it is about (ours, or the carrier's id of it) and its event, if any. */
export interface StatusCallback {
  callId?: string;
  carrierCallId?: string;
  event: CallEvent | null;
}

/** A media stream names its call and presents the call's single-use token. */
export interface StreamClaim {
  callId: string;
  token: string;
  carrierCallId: string;
}

export interface CarrierWebhooks {
  readonly description: CarrierWebhookDescription;
  /** Whether the carrier signed the request (a webhook, or the media stream's handshake). */
  verify(request: CarrierRequest, kind: 'webhook' | 'stream'): boolean;
  /** What a verified voice webhook asks about. */
  voice(request: CarrierRequest): VoiceWebhook;
  /** The voice webhook's answer connecting the call to our media stream, carrying its single-use token. */
  connect(callId: string, token: string): string;
  /** The voice webhook's answer ending the call, saying `say` first. */
  reject(say?: string): string;
  /** What a verified status callback says. */
  status(request: CarrierRequest): StatusCallback;
  /** Gives an event to the call's dial waiting in, or its media live in, this process; true when a dial here took a status. */
  callEvent(callId: string, event: CallEvent): boolean;
  /**
   * Takes a media stream the carrier opened: once it names its call and `claim` accepts its token,
   * the call's media. Null when refused (the socket is then closed), or when a dial of this
   * process was waiting for the call (it is answered there).
   */
  acceptStream(socket: WebSocket, claim: (stream: StreamClaim) => Promise<boolean>): Promise<{ callId: string; media: CallMedia } | null>;
}
