import alawmulaw from 'alawmulaw';
import type { RawData, WebSocket } from 'ws';
import { FRAME_SAMPLES, SAMPLE_RATE } from '../../../platform/audio/frames.ts';
import { loadResamplers, type Resampler } from '../../../platform/audio/resample.ts';
import type { MediaCloseReason, MediaStream } from '../../../ports/media.ts';

// Twilio Media Streams (bidirectional, `<Connect><Stream>`) as the runtime's MediaStream. Twilio
// sends JSON text messages: `connected`, `start` (the stream and call SIDs, the <Parameter>s),
// `media` (base64 mu-law, 8 kHz mono, 20 ms), `mark` (a mark we sent has been played), `dtmf`
// and `stop`. We send `media`, `mark` and `clear` (drop the audio buffered at Twilio; it then
// returns the pending marks). The runtime speaks PCM16 16 kHz in 20 ms frames: audio is converted
// here, both ways, with a real resampler — unless the call takes the μ-law itself (`mulaw`: a
// speech model that speaks it), when the payloads pass through as they come and nothing is
// decoded or resampled (the resamplers are made on the first PCM use only).

export const TWILIO_SAMPLE_RATE = 8000;

/** What the `start` message says about the stream. */
export interface TwilioStreamStart {
  streamSid: string;
  callSid: string;
  accountSid: string;
  customParameters: Record<string, string>;
}

export interface TwilioMediaOptions {
  /** How long the socket may take to send `start` (default 10 s). */
  startTimeoutMs?: number;
  /** Audio written but not yet taken by the socket, in bytes, beyond which the peer is too slow (default 64 KB, about 4 s). */
  maxBufferedBytes?: number;
  /** Caller frames kept until the call session listens (default 100: 2 s). */
  maxEarlyFrames?: number;
}

export interface TwilioMediaStream extends MediaStream {
  readonly start: TwilioStreamStart;
  /** Our side is ending the stream (hang-up, transfer): the close that follows is not reported as the caller's. */
  expectClose(): void;
}

interface InboundMessage {
  event?: string;
  streamSid?: string;
  start?: { streamSid?: string; callSid?: string; accountSid?: string; customParameters?: Record<string, unknown> };
  media?: { track?: string; payload?: string };
  mark?: { name?: string };
  dtmf?: { digit?: string };
}

function parse(data: RawData): InboundMessage | null {
  try {
    const value = JSON.parse(data.toString());
    return value && typeof value === 'object' ? (value as InboundMessage) : null;
  } catch {
    return null;
  }
}

function stringParameters(raw: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw ?? {})) if (typeof value === 'string') out[key] = value;
  return out;
}

/**
 * Waits for the stream's `start` on a socket Twilio opened, then answers the stream (or null when
 * the socket closed, sent garbage or took too long). Caller audio arriving before the call session
 * listens is kept (bounded).
 */
export async function openTwilioMediaStream(socket: WebSocket, options: TwilioMediaOptions = {}): Promise<TwilioMediaStream | null> {
  const start = await waitForStart(socket, options.startTimeoutMs ?? 10_000);
  if (!start) return null;
  return createStream(socket, start, await loadResamplers(), options);
}

function waitForStart(socket: WebSocket, timeoutMs: number): Promise<TwilioStreamStart | null> {
  return new Promise((resolve) => {
    const done = (value: TwilioStreamStart | null) => {
      clearTimeout(timer);
      socket.off('message', onMessage);
      socket.off('close', onClose);
      resolve(value);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    const onClose = () => done(null);
    const onMessage = (data: RawData) => {
      const message = parse(data);
      if (!message || message.event === 'connected') return;
      const start = message.event === 'start' ? message.start : undefined;
      if (!start?.streamSid || !start.callSid) return done(null);
      done({ streamSid: start.streamSid, callSid: start.callSid, accountSid: start.accountSid ?? '', customParameters: stringParameters(start.customParameters) });
    };
    socket.on('message', onMessage);
    socket.on('close', onClose);
  });
}

/** The stream's PCM side (the runtime's 16 kHz frames): resamplers made on first use, never for a μ-law call. */
function pcmEdge(resampler: (fromRate: number, toRate: number) => Resampler) {
  let up: Resampler | null = null;
  let down: Resampler | null = null;
  // Resampled caller audio not yet a whole 20 ms frame.
  let pending = new Int16Array(0);
  return {
    /** The caller's μ-law as whole frames of PCM16 16 kHz. */
    frames(mulaw: Uint8Array, deliver: (frame: Int16Array) => void) {
      up ??= resampler(TWILIO_SAMPLE_RATE, SAMPLE_RATE);
      const pcm16k = up.process(alawmulaw.mulaw.decode(mulaw));
      const joined = new Int16Array(pending.length + pcm16k.length);
      joined.set(pending);
      joined.set(pcm16k, pending.length);
      let offset = 0;
      for (; offset + FRAME_SAMPLES <= joined.length; offset += FRAME_SAMPLES) deliver(joined.slice(offset, offset + FRAME_SAMPLES));
      pending = joined.slice(offset);
    },
    /** One agent frame as a `media` payload. */
    payload(frame: Int16Array): string {
      down ??= resampler(SAMPLE_RATE, TWILIO_SAMPLE_RATE);
      return Buffer.from(alawmulaw.mulaw.encode(down.process(frame))).toString('base64');
    },
    close() {
      up?.close();
      down?.close();
    },
  };
}

function createStream(socket: WebSocket, start: TwilioStreamStart, resampler: (fromRate: number, toRate: number) => Resampler, options: TwilioMediaOptions): TwilioMediaStream {
  const maxBuffered = options.maxBufferedBytes ?? 64 * 1024;
  const maxEarly = options.maxEarlyFrames ?? 100;
  /** Who takes the caller's μ-law: the PCM side's frames, or a stage that takes it as it comes. */
  let taker: ((mulaw: Uint8Array) => void) | null = null;
  // Caller payloads that came before anyone listened (bounded).
  const early: Uint8Array[] = [];
  const markListeners: Array<(name: string) => void> = [];
  const dtmfListeners: Array<(digit: string) => void> = [];
  const closeListeners: Array<(reason: MediaCloseReason) => void> = [];
  const pcm = pcmEdge(resampler);
  let closed = false;
  let ourClose = false;

  function take(listener: (mulaw: Uint8Array) => void) {
    taker = listener;
    for (const payload of early.splice(0)) listener(payload);
  }

  function onMedia(payload: string) {
    const mulaw = Buffer.from(payload, 'base64');
    if (taker) return taker(mulaw);
    early.push(mulaw);
    if (early.length > maxEarly) early.shift();
  }

  function end(reason: MediaCloseReason) {
    if (closed) return;
    closed = true;
    pcm.close();
    const listeners = closeListeners.splice(0);
    // Ended from our side (hang-up, transfer): the session already knows, the close is not the caller's.
    if (ourClose) return;
    for (const listener of listeners) listener(reason);
  }

  socket.on('message', (data) => {
    const message = parse(data);
    if (!message || closed) return;
    if (message.event === 'media' && typeof message.media?.payload === 'string' && message.media.track !== 'outbound') onMedia(message.media.payload);
    else if (message.event === 'mark' && message.mark?.name) for (const listener of markListeners) listener(message.mark.name);
    else if (message.event === 'dtmf' && message.dtmf?.digit) for (const listener of dtmfListeners) listener(message.dtmf.digit);
    else if (message.event === 'stop') {
      end({ kind: 'hangup' });
      socket.close(1000);
    }
  });
  socket.on('close', () => end({ kind: 'error', message: 'the Twilio media stream closed without a stop' }));
  socket.on('error', (error) => end({ kind: 'error', message: `the Twilio media stream failed: ${error.message}` }));

  const sendJson = (value: unknown) => {
    if (!closed && socket.readyState === socket.OPEN) socket.send(JSON.stringify(value));
  };
  /** One frame of agent audio (a base64 payload made only when the socket takes it). */
  const sendMedia = (payload: () => string) => {
    if (closed) return true;
    if (socket.bufferedAmount > maxBuffered) return false;
    sendJson({ event: 'media', streamSid: start.streamSid, media: { payload: payload() } });
    return true;
  };

  return {
    start,
    onFrame: (listener) => take((mulaw) => pcm.frames(mulaw, listener)),
    mulaw: {
      onAudio: take,
      send: (frame) => sendMedia(() => Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('base64')),
    },
    onMark: (listener) => void markListeners.push(listener),
    onDtmf: (listener) => void dtmfListeners.push(listener),
    onClose: (listener) => void closeListeners.push(listener),
    send: (frame) => sendMedia(() => pcm.payload(frame)),
    mark: (name) => sendJson({ event: 'mark', streamSid: start.streamSid, mark: { name } }),
    clear: () => sendJson({ event: 'clear', streamSid: start.streamSid }),
    close() {
      ourClose = true;
      if (socket.readyState === socket.OPEN) socket.close(1000);
      end({ kind: 'hangup' });
    },
    expectClose() {
      ourClose = true;
    },
  };
}
