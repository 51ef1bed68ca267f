import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A local stand-in for an OpenAI-compatible `POST /v1/audio/speech` that answers `pcm` as the
// real API does (raw 16-bit little-endian mono, 24 kHz): a tone whose length follows the input.
// Records requests so tests can check what the adapter sent. With `stream`, the body goes out in
// pieces with a pause between them, as a server synthesising while it answers sends it; pieces
// have odd lengths, so some end in the middle of a sample.

export const FAKE_SPEECH_SAMPLES_PER_CHAR = 24_000 * 0.06;

export interface FakeSpeechRequest {
  authorization: string | undefined;
  body: { model?: string; voice?: string; input?: string; response_format?: string };
}

export interface FakeSpeechStreamPlan {
  /** Pieces the body is cut into (at most; a short body may need fewer). */
  chunks: number;
  /** Pause between two pieces. */
  delayMs: number;
  /** Pause before the first piece (a model's time to first audio); default none. */
  firstDelayMs?: number;
}

/** One streamed answer, as it goes out. */
export interface FakeSpeechStream {
  /** Pieces the body was cut into. */
  chunks: number;
  /** Pieces written so far. */
  sent: number;
  /** `finished` once the last piece is out; `aborted` when the client went away before. */
  closed: Promise<'finished' | 'aborted'>;
}

/** The fake's audio for `input`: FAKE_SPEECH_SAMPLES_PER_CHAR samples per character of a 220 Hz tone. */
export function fakeSpeechPcm(input: string): Buffer {
  const samples = Math.round(FAKE_SPEECH_SAMPLES_PER_CHAR * input.length);
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 24_000)), i * 2);
  return pcm;
}

function sendInPieces(res: http.ServerResponse, pcm: Buffer, plan: FakeSpeechStreamPlan): FakeSpeechStream {
  // Odd piece sizes (`| 1`), so a piece may end inside a sample.
  const size = Math.max(1, Math.ceil(pcm.length / plan.chunks)) | 1;
  let timer: NodeJS.Timeout | undefined;
  let at = 0;
  const stream: FakeSpeechStream = {
    chunks: Math.ceil(pcm.length / size),
    sent: 0,
    closed: new Promise((resolve) =>
      res.on('close', () => {
        clearTimeout(timer);
        resolve(res.writableFinished ? 'finished' : 'aborted');
      }),
    ),
  };
  res.writeHead(200, { 'content-type': 'audio/pcm' });
  const next = (): void => {
    if (res.destroyed) return;
    const piece = pcm.subarray(at, at + size);
    at += piece.length;
    stream.sent++;
    if (at >= pcm.length) res.end(piece);
    else {
      res.write(piece);
      timer = setTimeout(next, plan.delayMs);
    }
  };
  if (plan.firstDelayMs) timer = setTimeout(next, plan.firstDelayMs);
  else next();
  return stream;
}

export async function startFakeSpeechServer(options: { apiKey?: string; stream?: FakeSpeechStreamPlan } = {}) {
  const requests: FakeSpeechRequest[] = [];
  const streams: FakeSpeechStream[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      requests.push({ authorization: req.headers.authorization, body });
      if (req.method !== 'POST' || req.url !== '/v1/audio/speech') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"Incorrect API key provided"}}');
        return;
      }
      if (body.response_format !== 'pcm' || typeof body.input !== 'string' || !body.voice) {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad request"}}');
        return;
      }
      const pcm = fakeSpeechPcm(body.input);
      if (options.stream && pcm.length > 0) streams.push(sendInPieces(res, pcm, options.stream));
      else res.writeHead(200, { 'content-type': 'audio/pcm' }).end(pcm);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    streams,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
