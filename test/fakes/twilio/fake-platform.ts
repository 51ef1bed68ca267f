import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { type WebSocket, WebSocketServer } from 'ws';

// The platform's side of a call, for the fake's own tests: an HTTP server answering the voice
// webhook with <Connect><Stream> TwiML and recording status / AMD callbacks, and a WebSocket server
// receiving the Media Stream. Every request's X-Twilio-Signature is checked with the SDK's
// validateRequest against the URL the platform published (its public URL behind a proxy).

export interface PlatformRequest {
  path: string;
  params: Record<string, string>;
  headers: IncomingHttpHeaders;
  signatureValid: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: Media Streams messages are read field by field in assertions.
export type StreamMessage = Record<string, any>;

export interface PlatformStream {
  socket: WebSocket;
  messages: StreamMessage[];
  headers: IncomingHttpHeaders;
  signatureValid: boolean;
  closed: Promise<void>;
  /** The first message of `event` after the first `skip` of them. */
  next(event: string, skip?: number): Promise<StreamMessage>;
  send(message: object): void;
}

export interface PlatformOptions {
  authToken: string;
  /** The platform's public address (behind a proxy); default: its local one. */
  publicBaseUrl?: string;
  /** <Parameter>s the <Stream> carries. */
  streamParameters?: Record<string, string>;
}

const WAIT_MS = 5000;

export async function until<T>(find: () => T | undefined, what: string, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export async function startPlatform(options: PlatformOptions) {
  const requests: PlatformRequest[] = [];
  const streams: PlatformStream[] = [];
  let base = '';
  const published = () => options.publicBaseUrl ?? base;
  const streamTwiml = () => {
    const parameters = Object.entries(options.streamParameters ?? {})
      .map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
      .join('');
    const streamUrl = `${published().replace(/^http/, 'ws')}/media`;
    return `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${streamUrl}">${parameters}</Stream></Connect></Response>`;
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const params = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const signature = String(request.headers['x-twilio-signature'] ?? '');
      const signatureValid = twilio.validateRequest(options.authToken, signature, `${published()}${request.url}`, params);
      requests.push({ path: request.url ?? '', params, headers: request.headers, signatureValid });
      if (request.url === '/voice') response.writeHead(200, { 'content-type': 'text/xml' }).end(streamTwiml());
      else response.writeHead(204).end();
    });
  });
  const sockets = new WebSocketServer({ server, path: '/media' });
  sockets.on('connection', (socket, request) => {
    const signature = String(request.headers['x-twilio-signature'] ?? '');
    const url = `${published().replace(/^http/, 'ws')}${request.url}`;
    const messages: StreamMessage[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    streams.push({
      socket,
      messages,
      headers: request.headers,
      signatureValid: twilio.validateRequest(options.authToken, signature, url, {}),
      closed: new Promise((resolve) => socket.once('close', () => resolve())),
      next: (event, skip = 0) => until(() => messages.filter((message) => message.event === event)[skip], `a '${event}' message`),
      send: (message) => socket.send(JSON.stringify(message)),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    localBaseUrl: base,
    /** The URLs the platform gives Twilio. */
    url: (path: string) => `${published()}${path}`,
    requests,
    streams,
    /** The requests made to `path`, in order. */
    received: (path: string) => requests.filter((request) => request.path === path),
    nextStream: (index = 0) => until(() => streams[index], 'a Media Stream connection'),
    close: async () => {
      for (const client of sockets.clients) client.terminate();
      sockets.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
