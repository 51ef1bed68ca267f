import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A local stand-in for an OpenAI-compatible `POST /v1/audio/speech` that answers `pcm` as the
// real API does (raw 16-bit little-endian mono, 24 kHz): a tone whose length follows the input.
// Records requests so tests can check what the adapter sent.

export interface FakeSpeechRequest {
  authorization: string | undefined;
  body: { model?: string; voice?: string; input?: string; response_format?: string };
}

export async function startFakeSpeechServer(options: { apiKey?: string } = {}) {
  const requests: FakeSpeechRequest[] = [];
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
      const samples = Math.round(24_000 * 0.06 * body.input.length);
      const pcm = Buffer.alloc(samples * 2);
      for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 24_000)), i * 2);
      res.writeHead(200, { 'content-type': 'audio/pcm' }).end(pcm);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
