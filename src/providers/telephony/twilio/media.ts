import alawmulaw from 'alawmulaw';
import type { RawData, WebSocket } from 'ws';
import { FRAME_SAMPLES, SAMPLE_RATE } from '../../../platform/audio/frames.ts';
import { createResampler, type Resampler } from '../../../platform/audio/resample.ts';
import type { MediaCloseReason, MediaStream } from '../../../ports/media.ts';

// Twilio Media Streams (bidirectional, `<Connect><Stream>`) as the runtime's MediaStream. Twilio
// sends JSON text messages: `connected`, `start` (the stream and call SIDs, the <Parameter>s),
// `media` (base64 mu-law, 8 kHz mono, 20 ms), `mark` (a mark we sent has been played), `dtmf`
// and `stop`. We send `media`, `mark` and `clear` (drop the audio buffered at Twilio; it then
// returns the pending marks). The runtime speaks PCM16 16 kHz in 20 ms frames: audio is converted
// here, both ways, with a real resampler.

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
  const [up, down] = await Promise.all([createResampler(TWILIO_SAMPLE_RATE, SAMPLE_RATE), createResampler(SAMPLE_RATE, TWILIO_SAMPLE_RATE)]);
  return createStream(socket, start, up, down, options);
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

function createStream(socket: WebSocket, start: TwilioStreamStart, up: Resampler, down: Resampler, options: TwilioMediaOptions): TwilioMediaStream {
  const maxBuffered = options.maxBufferedBytes ?? 64 * 1024;
  const maxEarly = options.maxEarlyFrames ?? 100;
  let frameListener: ((frame: Int16Array) => void) | null = null;
  const early: Int16Array[] = [];
  const markListeners: Array<(name: string) => void> = [];
  const dtmfListeners: Array<(digit: string) => void> = [];
  const closeListeners: Array<(reason: MediaCloseReason) => void> = [];
  // Resampled caller audio not yet a whole 20 ms frame.
  let pending = new Int16Array(0);
  let closed = false;
  let ourClose = false;

  function deliver(frame: Int16Array) {
    if (frameListener) return frameListener(frame);
    early.push(frame);
    if (early.length > maxEarly) early.shift();
  }

  function onMedia(payload: string) {
    const pcm8k = alawmulaw.mulaw.decode(new Uint8Array(Buffer.from(payload, 'base64')));
    const pcm16k = up.process(pcm8k);
    const joined = new Int16Array(pending.length + pcm16k.length);
    joined.set(pending);
    joined.set(pcm16k, pending.length);
    let offset = 0;
    for (; offset + FRAME_SAMPLES <= joined.length; offset += FRAME_SAMPLES) deliver(joined.slice(offset, offset + FRAME_SAMPLES));
    pending = joined.slice(offset);
  }

  function end(reason: MediaCloseReason) {
    if (closed) return;
    closed = true;
    up.close();
    down.close();
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

  return {
    start,
    onFrame(listener) {
      frameListener = listener;
      for (const frame of early.splice(0)) listener(frame);
    },
    onMark: (listener) => void markListeners.push(listener),
    onDtmf: (listener) => void dtmfListeners.push(listener),
    onClose: (listener) => void closeListeners.push(listener),
    send(frame) {
      if (closed) return true;
      if (socket.bufferedAmount > maxBuffered) return false;
      const payload = Buffer.from(alawmulaw.mulaw.encode(down.process(frame))).toString('base64');
      sendJson({ event: 'media', streamSid: start.streamSid, media: { payload } });
      return true;
    },
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
