// The ports of the voice pipeline's two streaming stages (issue 31): a speech-to-speech model that
// hears the caller and speaks the agent's reply itself (OpenAI's Realtime API, or a self-hosted
// server that speaks it), and streaming recognition (one session per call, interim and final
// results) in place of one request per utterance. Audio crosses these ports as the runtime's PCM16
// mono 16 kHz (adapters convert at the edge), or, for a speech model on a carrier whose media is
// G.711 μ-law, as that μ-law at 8 kHz both ways (`codec: 'mulaw'`): the model takes the caller's
// bytes as the carrier sent them and gives bytes the carrier plays. Nothing here knows a vendor.
import type { AudioCodec } from './media.ts';

/** A function the model may call: the agent's own functions, knowledge search, transfer, end call. */
export interface SpeechModelTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface SpeechModelSessionOptions {
  /** The system prompt. */
  instructions: string;
  voice: string;
  /** BCP 47, for the model's transcription of the caller. */
  language: string;
  tools: SpeechModelTool[];
  /** The caller's turn ends after this much silence (the model's own voice activity detection). */
  turnEndSilenceMs: number;
  /** Whether the model cancels its own response when the caller starts speaking (default true). */
  interruptResponse?: boolean;
  /**
   * The audio both ways (default `pcm16`): `mulaw` sends the caller's audio with `sendMulaw` and
   * reports the agent's as `audio_mulaw` events; a `pcm16` session uses `sendAudio` and `audio`.
   */
  codec?: AudioCodec;
  signal?: AbortSignal;
}

export type SpeechResponseStatus = 'completed' | 'cancelled' | 'failed' | 'incomplete';

/** What a speech-to-speech session reports, in the order the model sent it. */
export type SpeechModelEvent =
  /** The caller started speaking, `audioMs` into the audio sent (a barge-in when the agent speaks). */
  | { type: 'speech_started'; audioMs: number }
  /** The model heard the caller's turn end `audioMs` into the audio sent. */
  | { type: 'speech_stopped'; audioMs: number }
  /** The model's transcription of the caller: partial (`final: false`, the text so far) or the whole turn. */
  | { type: 'user_transcript'; itemId: string; text: string; final: boolean }
  | { type: 'response_started'; responseId: string }
  /** The agent's speech, PCM16 16 kHz. */
  | { type: 'audio'; responseId: string; itemId: string; pcm: Int16Array }
  /** The agent's speech in a `mulaw` session: G.711 μ-law 8 kHz, as the model sent it. */
  | { type: 'audio_mulaw'; responseId: string; itemId: string; mulaw: Uint8Array }
  /** The words of the agent's speech: the text so far, then (`final`) the whole item. */
  | { type: 'agent_transcript'; responseId: string; itemId: string; text: string; final: boolean }
  /** The model asks for a tool; answer with `functionResult`. */
  | { type: 'function_call'; responseId: string; callId: string; name: string; arguments: string }
  | { type: 'response_done'; responseId: string; status: SpeechResponseStatus; outputTokens: number; inputTokens: number }
  /** The model refused an event or failed; the session stays open unless `closed` follows. */
  | { type: 'error'; code: string | null; message: string }
  | { type: 'closed'; reason: string };

export interface SpeechModelSession {
  /** Registers the receiver of every event (one listener). */
  onEvent(listener: (event: SpeechModelEvent) => void): void;
  /** The caller's audio, PCM16 16 kHz, any length. Returns false when the link is over its bound (the audio is dropped). */
  sendAudio(pcm: Int16Array): boolean;
  /** The caller's μ-law 8 kHz as the transport gave it (a `mulaw` session). Returns false as `sendAudio` does. */
  sendMulaw(mulaw: Uint8Array): boolean;
  /** Asks for a response now: with `instructions`, for this response only (the first message). */
  respond(instructions?: string): void;
  /** A line the caller typed (the media WebSocket's text), added to the conversation and answered. */
  sendText(text: string): void;
  /** The result of a `function_call`, then a response to it. */
  functionResult(callId: string, output: string): void;
  /**
   * Barge-in: stops the response in flight and, when the agent's item was heard only in part, tells
   * the model where the caller cut it (`audioMs` of that item played).
   */
  interrupt(heard?: { itemId: string; audioMs: number }): void;
  close(): void;
}

export interface SpeechModel {
  readonly name: string;
  /** Connects and configures one session; rejects when the model cannot be reached or refuses it. */
  open(options: SpeechModelSessionOptions): Promise<SpeechModelSession>;
}

export type StreamingRecognitionEvent =
  | { type: 'speech_started'; audioMs: number }
  | { type: 'speech_stopped'; audioMs: number }
  /** The text so far of the utterance `itemId`. */
  | { type: 'interim'; itemId: string; text: string }
  /** The whole utterance: the caller's turn as the transcript keeps it. */
  | { type: 'final'; itemId: string; text: string }
  | { type: 'error'; code: string | null; message: string }
  | { type: 'closed'; reason: string };

export interface StreamingRecognitionSession {
  onEvent(listener: (event: StreamingRecognitionEvent) => void): void;
  /** PCM16 16 kHz. Returns false when the link is over its bound (the audio is dropped). */
  sendAudio(pcm: Int16Array): boolean;
  close(): void;
}

export interface StreamingSpeechToText {
  readonly name: string;
  open(options: { language: string; turnEndSilenceMs: number; signal?: AbortSignal }): Promise<StreamingRecognitionSession>;
}
