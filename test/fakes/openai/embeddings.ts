import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A local server speaking the OpenAI POST /v1/embeddings protocol, for tests and the benchmark.
// Vectors are deterministic: a hashed bag of (lower-cased, crudely stemmed) words, L2-normalised,
// so texts sharing words are close. Supports encoding_format float and base64.

export const FAKE_DIMENSIONS = 256;

function stem(word: string): string {
  return word.replace(/(ing|ed|es|s)$/u, '');
}

/** A word's hash (slot seed and sign), memoised: a benchmark embeds millions of words of a small vocabulary. */
const hashes = new Map<string, { slot: number; sign: number }>();
function hashOf(word: string) {
  let hash = hashes.get(word);
  if (!hash) {
    const digest = createHash('sha256').update(word).digest();
    hash = { slot: digest.readUInt32BE(0), sign: digest[4] & 1 ? 1 : -1 };
    if (hashes.size < 100_000) hashes.set(word, hash);
  }
  return hash;
}

export function fakeEmbedding(text: string, dimensions = FAKE_DIMENSIONS): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (raw.length < 3) continue;
    const { slot, sign } = hashOf(stem(raw));
    vector[slot % dimensions] += sign;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((v) => v / norm);
}

export interface FakeEmbeddingsServer {
  baseUrl: string;
  /** Requests received (bodies), for assertions. */
  requests: Array<{ model: string; input: string[]; authorization?: string }>;
  /** Makes the next n requests fail with HTTP 500. */
  failNext(n: number): void;
  close(): Promise<void>;
}

export async function startFakeEmbeddingsServer(): Promise<FakeEmbeddingsServer> {
  const requests: FakeEmbeddingsServer['requests'] = [];
  let failures = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
        return;
      }
      if (failures > 0) {
        failures--;
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { model: string; input: string | string[]; encoding_format?: string };
      const input = Array.isArray(body.input) ? body.input : [body.input];
      requests.push({ model: body.model, input, authorization: req.headers.authorization });
      const data = input.map((text, index) => {
        const vector = fakeEmbedding(text);
        const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
        return { object: 'embedding', index, embedding };
      });
      const tokens = input.reduce((n, t) => n + t.split(/\s+/).length, 0);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    failNext(n) {
      failures = n;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
