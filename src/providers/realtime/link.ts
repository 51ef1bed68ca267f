import type { RealtimeClientEvent, RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import WebSocket from 'ws';

// One WebSocket to an OpenAI Realtime API server (OpenAI, or a self-hosted server that speaks the
// protocol), with the `ws` package: `REALTIME_BASE_URL` https://… connects with wss://, http://…
// with plain ws:// (the `openai` SDK's realtime client always uses wss, so it is not used here;
// its event types are). Opening waits for session.created, sends the session's configuration and
// resolves on session.updated: a refused configuration rejects the open, not the first turn.

export interface RealtimeLinkConfig {
  /** The API's base URL with its `/v1`, as for the REST API. */
  baseUrl: string;
  apiKey?: string;
  /** Refused when connecting and configuring take longer. */
  connectTimeoutMs: number;
}

/** Audio waiting in the socket beyond this (about 10 s of 24 kHz PCM16) is dropped, not queued. */
export const MAX_BUFFERED_BYTES = 512 * 1024;

export interface RealtimeLink {
  send(event: RealtimeClientEvent): void;
  /** Sends audio unless the socket is over its bound; answers whether it was sent. */
  sendBounded(event: RealtimeClientEvent): boolean;
  onEvent(listener: (event: RealtimeServerEvent) => void): void;
  onClose(listener: (reason: string) => void): void;
  close(): void;
}

export function realtimeUrl(baseUrl: string, query: Record<string, string>): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/realtime`);
  if (url.protocol === 'https:') url.protocol = 'wss:';
  else if (url.protocol === 'http:') url.protocol = 'ws:';
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url.toString();
}

export class RealtimeRefused extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'RealtimeRefused';
  }
}

export function openRealtimeLink(config: RealtimeLinkConfig, query: Record<string, string>, session: Extract<RealtimeClientEvent, { type: 'session.update' }>['session'], signal?: AbortSignal): Promise<RealtimeLink> {
  const socket = new WebSocket(realtimeUrl(config.baseUrl, query), { headers: config.apiKey ? { Authorization: `Bearer ${config.apiKey}` } : {}, maxPayload: 16 * 1024 * 1024 });
  let listener: (event: RealtimeServerEvent) => void = () => undefined;
  let closeListener: (reason: string) => void = () => undefined;
  const link: RealtimeLink = {
    send: (event) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(event));
    },
    sendBounded: (event) => {
      if (socket.readyState !== WebSocket.OPEN || socket.bufferedAmount > MAX_BUFFERED_BYTES) return false;
      socket.send(JSON.stringify(event));
      return true;
    },
    onEvent: (next) => {
      listener = next;
    },
    onClose: (next) => {
      closeListener = next;
    },
    close: () => socket.close(1000),
  };
  return new Promise((resolve, reject) => {
    let state: 'opening' | 'open' | 'failed' = 'opening';
    const fail = (error: Error) => {
      if (state !== 'opening') return;
      state = 'failed';
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      socket.terminate();
      reject(error);
    };
    const timer = setTimeout(() => fail(new RealtimeRefused(`no session within ${config.connectTimeoutMs} ms`, 'timeout')), config.connectTimeoutMs);
    const aborted = () => fail(new RealtimeRefused('aborted', 'aborted'));
    signal?.addEventListener('abort', aborted, { once: true });
    socket.on('unexpected-response', (_req, res) => fail(new RealtimeRefused(`the server refused the connection: HTTP ${res.statusCode}`, `http_${res.statusCode}`)));
    socket.on('error', (error) => fail(new RealtimeRefused(error.message, 'connection_failed')));
    socket.on('close', (code, reason) => {
      if (state === 'open') closeListener(reason.toString() || `closed (${code})`);
      else fail(new RealtimeRefused(`closed before the session was configured (${code})`, 'closed'));
    });
    socket.on('message', (data) => {
      let event: RealtimeServerEvent;
      try {
        event = JSON.parse(String(data));
      } catch {
        return;
      }
      if (state === 'open') return listener(event);
      if (event.type === 'session.created') link.send({ type: 'session.update', session });
      else if (event.type === 'error') fail(new RealtimeRefused(event.error.message, event.error.code ?? null));
      else if (event.type === 'session.updated') {
        state = 'open';
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        resolve(link);
      }
    });
    if (signal?.aborted) aborted();
  });
}

/** PCM16 from a base64 audio delta, in memory of its own (aligned). */
export function pcmFromBase64(delta: string): Int16Array {
  const bytes = Buffer.from(delta, 'base64');
  const pcm = new Int16Array(bytes.length >> 1);
  Buffer.from(pcm.buffer).set(bytes.subarray(0, pcm.length * 2));
  return pcm;
}

export const pcmToBase64 = (pcm: Int16Array) => Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64');
export const bytesToBase64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/** Bytes (μ-law) from a base64 audio delta, in memory of their own (not a slice of Buffer's shared pool: the recording keeps them). */
export function bytesFromBase64(delta: string): Uint8Array {
  const decoded = Buffer.from(delta, 'base64');
  const bytes = new Uint8Array(decoded.length);
  bytes.set(decoded);
  return bytes;
}

/** The caller's side of a session, as both kinds of session report it. */
export type CallerEvent =
  | { type: 'speech_started'; audioMs: number }
  | { type: 'speech_stopped'; audioMs: number }
  /** The transcription of the caller's item `itemId`: the text so far, then (`final`) the whole. */
  | { type: 'transcript'; itemId: string; text: string; final: boolean };

/**
 * The caller's side of a session's events, shared by the speech-to-speech and the transcription
 * session: the server VAD's start and end of speech, and each item's transcription accumulated from
 * its deltas. Null for any other event (a failed transcription only forgets its item's text).
 */
export function callerEvents(): (event: RealtimeServerEvent) => CallerEvent | null {
  const texts = new Map<string, string>();
  return (event) => {
    switch (event.type) {
      case 'input_audio_buffer.speech_started':
        return { type: 'speech_started', audioMs: event.audio_start_ms };
      case 'input_audio_buffer.speech_stopped':
        return { type: 'speech_stopped', audioMs: event.audio_end_ms };
      case 'conversation.item.input_audio_transcription.delta': {
        const text = (texts.get(event.item_id) ?? '') + (event.delta ?? '');
        texts.set(event.item_id, text);
        return { type: 'transcript', itemId: event.item_id, text, final: false };
      }
      case 'conversation.item.input_audio_transcription.completed':
        texts.delete(event.item_id);
        return { type: 'transcript', itemId: event.item_id, text: event.transcript.trim(), final: true };
      case 'conversation.item.input_audio_transcription.failed':
        texts.delete(event.item_id);
        return null;
      default:
        return null;
    }
  };
}
