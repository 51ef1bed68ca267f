import type * as M from '../generated/models.js';
import { VoiceSessionsBase } from '../generated/resources/voice-sessions.js';

export type VoiceSessionCreated = M.CreateVoiceSessionResponse;

/** The part of the WebSocket API the helper needs (the browser's, Node ≥ 22's or the `ws` package's). */
export interface WebSocketLike {
  binaryType: string;
  send(data: string | ArrayBufferLike | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/**
 * `client.voiceSessions`: `create()` answers the session with its media token (shown once);
 * `connect()` opens the built-in media WebSocket for it. On that socket the agent speaks first;
 * send binary PCM16 mono 16 kHz audio or `{"type":"text","text":…}`; receive binary PCM16 agent
 * speech, `{"type":"transcript",role,text,final}`, `{"type":"clear"}` on barge-in and
 * `{"type":"end",reason}` before it closes.
 */
export class VoiceSessions extends VoiceSessionsBase {
  /** The media WebSocket's URL with the session's token. */
  mediaUrl(session: Pick<VoiceSessionCreated, 'url' | 'token' | 'transport'>): string {
    if (session.transport !== 'builtin') throw new Error(`a ${session.transport} session is joined with the LiveKit client SDK (url and token)`);
    return `${session.url}${session.url.includes('?') ? '&' : '?'}token=${encodeURIComponent(session.token)}`;
  }

  /** Opens the media WebSocket (binary frames as ArrayBuffer) with the global WebSocket, or the one given. */
  connect<W extends WebSocketLike = WebSocketLike>(session: Pick<VoiceSessionCreated, 'url' | 'token' | 'transport'>, options: { WebSocket?: new (url: string) => W } = {}): W {
    const Socket = options.WebSocket ?? (globalThis as unknown as { WebSocket?: new (url: string) => W }).WebSocket;
    if (!Socket) throw new Error('no global WebSocket here (Node < 22): pass options.WebSocket, e.g. the ws package');
    const socket = new Socket(this.mediaUrl(session));
    socket.binaryType = 'arraybuffer';
    return socket;
  }
}
