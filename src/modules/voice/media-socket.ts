import type { Socket } from 'node:net';
import type { RawData, WebSocket } from 'ws';
import { FRAME_SAMPLES } from '../../platform/audio/frames.ts';
import type { MediaCloseReason, MediaStream } from '../../ports/media.ts';
import type { MediaWriter } from './media-writer.ts';
import type { SessionEndReason } from './tables.ts';

// The built-in media WebSocket (GET /v1/media/stream?token=) as the runtime's MediaStream. The
// protocol (DESIGN "Voice sessions"): the server speaks first; the client sends binary PCM16 mono
// 16 kHz audio (any chunk size) or `{type:"text", text}`; the server sends binary PCM16 frames of
// agent speech, `{type:"transcript", role, text, final}`, `{type:"clear"}` on barge-in and
// `{type:"end", reason}` right before it closes. A client that stops reading is cut off.
//
// With a media writer (media-writer.ts), every outgoing message goes through its thread: agent
// frames are handed over `leadMs` ahead and written at their time there, off the event loop.
// Without one (or for a socket it cannot take), messages are sent here through ws.

export interface MediaSocketOptions {
  /** Unsent bytes beyond which the client is too slow (default 256 KB: about 8 s of audio). */
  maxBufferedBytes?: number;
  /** Longest text message taken. */
  maxTextLength?: number;
  /** Writes the outgoing messages off the event loop; needs the WebSocket's TCP socket. */
  writer?: { writer: MediaWriter; socket: Socket; leadMs: number };
}

/** The session's end as the protocol names it. */
export function protocolReason(reason: string | undefined): SessionEndReason {
  switch (reason) {
    case 'api_hangup':
      return 'api_end';
    case 'silence_timeout':
      return 'idle_timeout';
    case 'max_duration':
    case 'insufficient_balance':
    case 'media_error':
      return reason;
    case 'customer_hangup':
      return 'client_closed';
    default:
      // The agent ended it: a goodbye, its end_call tool, a transfer a browser cannot follow.
      return 'agent_end_call';
  }
}

export interface MediaSocketStream extends MediaStream {
  /** Sends `{type:"end", reason}` and closes. */
  end(reason: SessionEndReason): void;
}

export function createMediaSocketStream(socket: WebSocket, options: MediaSocketOptions = {}): MediaSocketStream {
  const maxBuffered = options.maxBufferedBytes ?? 256 * 1024;
  const maxText = options.maxTextLength ?? 4000;
  let frameListener: ((frame: Int16Array) => void) | null = null;
  const textListeners: Array<(text: string) => void> = [];
  const closeListeners: Array<(reason: MediaCloseReason) => void> = [];
  let pending = new Int16Array(0);
  let closed = false;
  const channel = options.writer ? options.writer.writer.attach(options.writer.socket, { maxBufferedBytes: maxBuffered }) : null;

  const sendJson = (value: unknown) => {
    if (closed || socket.readyState !== socket.OPEN) return;
    if (channel) channel.sendText(JSON.stringify(value));
    else socket.send(JSON.stringify(value));
  };
  /** Closes the WebSocket once the writer's thread has written its last messages (the close frame must follow them). */
  const closeSocket = (code: number, reason?: string) => {
    if (!channel) return socket.close(code, reason);
    void channel.release().then(() => socket.close(code, reason));
  };

  function onAudio(bytes: Buffer) {
    // The usual message, one whole frame with nothing pending: the frame is a view of the message's
    // bytes (ws hands each message in memory of its own, unmasked in place: nothing writes there
    // again), copied only when they do not start at an even offset as samples must.
    if (pending.length === 0 && bytes.length === FRAME_SAMPLES * 2) {
      const aligned = bytes.byteOffset % 2 === 0;
      frameListener?.(aligned ? new Int16Array(bytes.buffer, bytes.byteOffset, FRAME_SAMPLES) : new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)));
      return;
    }
    // Whole samples only; an odd trailing byte is dropped.
    const samples = new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + (bytes.length & ~1)));
    const joined = new Int16Array(pending.length + samples.length);
    joined.set(pending);
    joined.set(samples, pending.length);
    let offset = 0;
    for (; offset + FRAME_SAMPLES <= joined.length; offset += FRAME_SAMPLES) frameListener?.(joined.slice(offset, offset + FRAME_SAMPLES));
    pending = joined.slice(offset);
  }

  function onControl(data: RawData) {
    let message: { type?: unknown; text?: unknown };
    try {
      message = JSON.parse(data.toString());
    } catch {
      return sendJson({ type: 'error', message: 'messages are JSON text or binary PCM16 audio' });
    }
    if (message?.type === 'text' && typeof message.text === 'string' && message.text.length <= maxText && !message.text.includes('\u0000')) {
      for (const listener of textListeners) listener(message.text);
    } else {
      sendJson({ type: 'error', message: `unknown or invalid message (text at most ${maxText} characters)` });
    }
  }

  function closeWith(reason: MediaCloseReason) {
    if (closed) return;
    closed = true;
    for (const listener of closeListeners.splice(0)) listener(reason);
  }

  socket.on('message', (data, isBinary) => {
    if (closed) return;
    if (isBinary) onAudio(Buffer.isBuffer(data) ? data : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data as ArrayBuffer)]));
    else onControl(data);
  });
  socket.on('close', () => {
    void channel?.release();
    closeWith({ kind: 'hangup' });
  });
  socket.on('error', (error) => closeWith({ kind: 'error', message: `the media socket failed: ${error.message}` }));

  return {
    onFrame(listener) {
      frameListener = listener;
    },
    onMark: () => undefined,
    onText: (listener) => void textListeners.push(listener),
    onClose: (listener) => void closeListeners.push(listener),
    leadMs: channel ? options.writer?.leadMs : undefined,
    send(frame, delayMs) {
      if (closed) return true;
      if (channel) {
        if (channel.failed) return false;
        channel.sendBinary(new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength), delayMs ?? 0);
        return true;
      }
      if (socket.bufferedAmount > maxBuffered) return false;
      socket.send(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength), { binary: true });
      return true;
    },
    mark: () => undefined,
    clear() {
      channel?.dropQueued();
      sendJson({ type: 'clear' });
    },
    transcript: (line) => sendJson({ type: 'transcript', role: line.role, text: line.text, final: true }),
    close() {
      if (closed) return;
      closed = true;
      closeSocket(1000);
    },
    end(reason) {
      if (closed) return;
      sendJson({ type: 'end', reason });
      closed = true;
      closeSocket(1000, reason);
    },
  };
}
