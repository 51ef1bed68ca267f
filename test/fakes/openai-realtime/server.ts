// A local stand-in for OpenAI's Realtime API over WebSocket (GA protocol), written from OpenAI's
// documentation of its client and server events: GET /v1/realtime?model=… (or ?intent=transcription)
// upgraded with `Authorization: Bearer <key>`, session.created first, then session.update,
// input_audio_buffer.*, conversation.item.*, response.* and the transcription events; errors as
// `error` events that leave the session open; audio in the session's formats (PCM16 24 kHz, or
// G.711 μ-law / A-law at 8 kHz when session.update asks for them). Plain ws:// by default, wss://
// when given a key and certificate (the `openai` SDK's own realtime client always connects with
// wss). It records every connection and event, and its delays are settings (the model's first
// audio, transcription).
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { RealtimeClientEvent, RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import { WebSocketServer } from 'ws';
import type { Outgoing } from './response.ts';
import { createFakeSession, type RealtimeResponder, type SessionConfig, type SessionScript } from './session.ts';

export type { RealtimeReply } from './response.ts';
export type { RealtimeResponder, ResponderContext } from './session.ts';

export interface FakeRealtimeConnection {
  path: string;
  model: string | null;
  intent: string | null;
  authorization: string | undefined;
  received: RealtimeClientEvent[];
  sent: RealtimeServerEvent[];
  /** The session's configuration now (as session.updated last showed it). */
  session(): SessionConfig;
  /** Milliseconds of caller audio received. */
  audioMs(): number;
  closed: boolean;
  /** Drops the connection from the server's side (the model went away). */
  disconnect(): void;
  /** Stops reading the connection (a model that does not keep up): the client's socket fills. */
  stall(): void;
}

export interface FakeRealtimeServer {
  /** `REALTIME_BASE_URL`: http(s)://127.0.0.1:port/v1. */
  url: string;
  connections: FakeRealtimeConnection[];
  /** The texts of the next caller turns the model "hears", in order (it cannot hear). */
  hear(...texts: string[]): void;
  /** The next responses, in order; a function sees the conversation and the response's instructions. */
  reply(...replies: RealtimeResponder[]): void;
  set(timing: Partial<SessionScript['timing']>): void;
  /** Forgets what was queued with `hear` and `reply` and not used. */
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeRealtimeServer(
  options: { apiKey?: string; tls?: { key: string; cert: string }; timing?: Partial<SessionScript['timing']>; fallback?: RealtimeResponder } = {},
): Promise<FakeRealtimeServer> {
  const apiKey = options.apiKey ?? 'sk-fake-realtime';
  const script: SessionScript = {
    timing: { firstAudioDelayMs: 0, audioChunkIntervalMs: 0, msPerWord: 300, transcriptionDelayMs: 0, sessionCreatedDelayMs: 0, ...options.timing },
    heard: [],
    replies: [],
    fallback: options.fallback,
  };
  const connections: FakeRealtimeConnection[] = [];
  const server = options.tls ? https.createServer(options.tls) : http.createServer();
  server.on('request', (_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } })));
  const sockets = new WebSocketServer({ noServer: true, maxPayload: 15 * 1024 * 1024 });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const refuse = (status: number, message: string) => {
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n${JSON.stringify({ error: { message, type: 'invalid_request_error' } })}`);
    };
    if (url.pathname !== '/v1/realtime') return refuse(404, `no route ${url.pathname}`);
    if (req.headers.authorization !== `Bearer ${apiKey}`) return refuse(401, 'Incorrect API key provided.');
    const intent = url.searchParams.get('intent');
    const model = url.searchParams.get('model');
    if (!model && intent !== 'transcription') return refuse(400, 'Missing required parameter: model.');
    sockets.handleUpgrade(req, socket, head, (ws) => {
      let serial = 0;
      const record: FakeRealtimeConnection = {
        path: url.pathname + url.search,
        model,
        intent,
        authorization: req.headers.authorization,
        received: [],
        sent: [],
        session: () => session.config,
        audioMs: () => session.audioMs(),
        closed: false,
        disconnect: () => ws.close(1011, 'server going away'),
        stall: () => (ws as unknown as { _socket: import('node:net').Socket })._socket.pause(),
      };
      connections.push(record);
      const send = (event: Outgoing) => {
        const full = { event_id: `event_${++serial}`, ...event } as RealtimeServerEvent;
        record.sent.push(full);
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(full));
      };
      const session = createFakeSession({ intent: intent === 'transcription' ? 'transcription' : 'realtime', model: model ?? 'gpt-4o-transcribe', script, send });
      ws.on('message', (data) => {
        let event: RealtimeClientEvent;
        try {
          event = JSON.parse(String(data));
        } catch {
          return send({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_json', message: 'We could not parse the JSON body of your request.', event_id: null, param: null } });
        }
        record.received.push(event);
        session.receive(event);
      });
      ws.on('close', () => {
        record.closed = true;
        session.close();
      });
      // Not keeping the process alive for a session nobody waits for any more.
      setTimeout(() => session.created(), script.timing.sessionCreatedDelayMs).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}/v1`,
    connections,
    hear: (...texts) => void script.heard.push(...texts),
    reply: (...replies) => void script.replies.push(...replies),
    set: (timing) => Object.assign(script.timing, timing),
    reset: () => {
      script.heard.length = 0;
      script.replies.length = 0;
    },
    close: async () => {
      for (const client of sockets.clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
