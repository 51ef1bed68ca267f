import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ApiTimeoutError, InternalServerError, RateLimitError, VoiceAgent } from '../../sdks/typescript/src/index.ts';

// Retries, timeouts and typed errors of the TypeScript SDK against a local server that answers
// as the platform does when it is overloaded: 429 with Retry-After, 503 problem+json, a reset
// connection, no answer at all. Each test scripts the answers of its own path. Then the refresh
// of an access token before a streamed upload, which could not be resent after a 401.

const csvStream = () =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('phone\n+15550100200\n'));
      controller.close();
    },
  });

type Answer = { status: number; headers?: Record<string, string>; body?: unknown } | 'reset' | 'hang';
interface Seen {
  method: string;
  key: string | undefined;
  authorization: string | undefined;
  body: string;
}

const scripts = new Map<string, Answer[]>();
const seen = new Map<string, Seen[]>();
const refusedUntil = new Map<string, number>();
// Like the platform: a request carrying one of these access tokens is refused as expired.
const expiredTokens = new Set<string>();
const tokenExpired: Answer = { status: 401, body: { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'the access token has expired; refresh it', code: 'token_expired', request_id: 'req_fake' } };
const server = http.createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const authorization = req.headers.authorization;
  seen.set(path, [...(seen.get(path) ?? []), { method: String(req.method), key: req.headers['idempotency-key'] as string | undefined, authorization, body: Buffer.concat(chunks).toString() }]);
  // Like the platform's limiter: a request before the Retry-After it was given is refused again.
  const wait = refusedUntil.get(path) ?? 0;
  const expired = expiredTokens.has(authorization?.replace(/^Bearer /, '') ?? '');
  const answer: Answer = expired ? tokenExpired : Date.now() < wait ? { status: 429 } : (scripts.get(path)?.shift() ?? { status: 200, body: { ok: true } });
  if (typeof answer === 'object' && answer.headers?.['retry-after']) refusedUntil.set(path, Date.now() + Number(answer.headers['retry-after']) * 1000);
  if (answer === 'reset') return req.socket.destroy();
  if (answer === 'hang') return;
  const problem = answer.status >= 400;
  res.writeHead(answer.status, { 'content-type': problem ? 'application/problem+json' : 'application/json', 'x-request-id': 'req_fake', ...answer.headers });
  res.end(JSON.stringify(answer.body ?? { type: 'about:blank', title: 'x', status: answer.status, detail: 'scripted', code: answer.status === 429 ? 'rate_limited' : 'service_unavailable', request_id: 'req_fake' }));
});
let baseURL: string;
let client: VoiceAgent;

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  baseURL = `http://127.0.0.1:${port}`;
  client = new VoiceAgent({ baseURL, apiKey: 'sk_test', retryDelay: 5, maxRetryDelay: 20 });
});
after(() => {
  server.closeAllConnections();
  server.close();
});

describe('TypeScript SDK retries', () => {
  it('a POST is retried after 429 (Retry-After) and 503 with the same Idempotency-Key, and its answer returned', async () => {
    scripts.set('/v1/agents', [{ status: 429, headers: { 'retry-after': '1' } }, { status: 503 }, { status: 201, body: { id: 'agent_1', name: 'A' } }]);
    const agent = await client.agents.create({ name: 'A' });
    assert.deepEqual(agent, { id: 'agent_1', name: 'A' });
    const attempts = seen.get('/v1/agents')!;
    assert.equal(attempts.length, 3);
    assert.match(attempts[0].key!, /^[0-9a-f-]{36}$/);
    assert.ok(attempts.every((a) => a.key === attempts[0].key && a.body === '{"name":"A"}'), JSON.stringify(attempts));
    // The next logical request has a key of its own.
    await client.agents.create({ name: 'B' });
    assert.notEqual(seen.get('/v1/agents')![3].key, attempts[0].key);
  });

  it('a GET is retried after a reset connection; a caller-given Idempotency-Key is sent as given', async () => {
    scripts.set('/v1/agents/agent_2', ['reset', { status: 200, body: { id: 'agent_2' } }]);
    assert.deepEqual(await client.agents.retrieve('agent_2'), { id: 'agent_2' });
    assert.equal(seen.get('/v1/agents/agent_2')!.length, 2);
    await client.agents.duplicate('agent_2', {}, { idempotencyKey: 'mine-1' });
    assert.equal(seen.get('/v1/agents/agent_2/duplicate')![0].key, 'mine-1');
  });

  it('a PATCH is not repeated after a 503: the typed error carries status, code and request id', async () => {
    scripts.set('/v1/agents/agent_3', [{ status: 503 }]);
    const error = await client.agents.update('agent_3', { name: 'C' }).catch((e: unknown) => e);
    assert.ok(error instanceof InternalServerError, String(error));
    assert.equal(error.status, 503);
    assert.equal(error.code, 'service_unavailable');
    assert.equal(error.requestId, 'req_fake');
    assert.equal(seen.get('/v1/agents/agent_3')!.length, 1);
  });

  it('retries stop after maxRetries: the last 429 is thrown as a RateLimitError', async () => {
    scripts.set('/v1/wallet', [{ status: 429, headers: { 'retry-after': '0' } }, { status: 429 }, { status: 429 }, { status: 200 }]);
    await assert.rejects(client.wallet.retrieve({ maxRetries: 1 }), (error: unknown) => error instanceof RateLimitError && error.code === 'rate_limited');
    assert.equal(seen.get('/v1/wallet')!.length, 2);
  });

  it('a streamed upload is sent once: a stream cannot be replayed', async () => {
    scripts.set('/v1/campaigns/cmp_1/upload', [{ status: 503 }]);
    await assert.rejects(client.campaigns.upload('cmp_1', csvStream()), InternalServerError);
    const attempts = seen.get('/v1/campaigns/cmp_1/upload')!;
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0].body, 'phone\n+15550100200\n');
  });

  it('an attempt without an answer ends at the timeout as an ApiTimeoutError', async () => {
    scripts.set('/v1/health', ['hang', 'hang']);
    await assert.rejects(client.health.check({ timeout: 100, maxRetries: 1 }), ApiTimeoutError);
    assert.equal(seen.get('/v1/health')!.length, 2, 'a timed-out GET is retried');
  });
});

describe('TypeScript SDK token refresh before a streamed upload', () => {
  beforeEach(() => {
    seen.clear();
    expiredTokens.clear();
  });

  const tokenPair = (access: string, expiresIn: number): Answer => ({ status: 200, body: { access_token: access, refresh_token: `rt_${access}`, token_type: 'Bearer', expires_in: expiresIn } });
  /** An unsigned JWT: the SDK reads its claims, only the server verifies a signature. */
  const jwt = (claims: object) => `${[{ alg: 'HS256', typ: 'JWT' }, claims].map((part) => Buffer.from(JSON.stringify(part)).toString('base64url')).join('.')}.signature`;

  it('an expired access token is refreshed before a streamed upload, once for concurrent uploads', async () => {
    scripts.set('/v1/auth/login', [tokenPair('access-1', 0)]);
    scripts.set('/v1/auth/refresh', [tokenPair('access-2', 3600)]);
    const told: string[] = [];
    const user = new VoiceAgent({ baseURL, email: 'a@example.com', password: 'pw', onTokens: (tokens) => void told.push(tokens.accessToken) });
    await user.auth.me();
    expiredTokens.add('access-1');
    await Promise.all([user.campaigns.upload('cmp_a', csvStream()), user.campaigns.upload('cmp_b', csvStream())]);
    assert.equal(seen.get('/v1/auth/refresh')?.length, 1, 'one refresh for both uploads');
    assert.deepEqual(told, ['access-1', 'access-2']);
    for (const path of ['/v1/campaigns/cmp_a/upload', '/v1/campaigns/cmp_b/upload']) {
      assert.deepEqual(
        seen.get(path)!.map(({ authorization, body }) => ({ authorization, body })),
        [{ authorization: 'Bearer access-2', body: 'phone\n+15550100200\n' }],
      );
    }
  });

  it('a resumed token past half its lifetime (its JWT iat and exp) is refreshed before a streamed upload, not before a JSON request', async () => {
    const now = Math.floor(Date.now() / 1000);
    const resumed = jwt({ sub: 'user_1', iat: now - 40 * 60, exp: now + 20 * 60 });
    scripts.set('/v1/auth/refresh', [tokenPair('access-3', 3600)]);
    const user = new VoiceAgent({ baseURL, accessToken: resumed, refreshToken: 'rt_saved' });
    await user.auth.me();
    assert.equal(seen.get('/v1/auth/me')![0].authorization, `Bearer ${resumed}`);
    assert.equal(seen.get('/v1/auth/refresh'), undefined, 'a JSON request can be resent: no refresh ahead');
    await user.campaigns.upload('cmp_c', csvStream());
    assert.deepEqual(
      seen.get('/v1/auth/refresh')?.map(({ body }) => JSON.parse(body)),
      [{ refresh_token: 'rt_saved' }],
    );
    assert.equal(seen.get('/v1/campaigns/cmp_c/upload')?.[0].authorization, 'Bearer access-3');
  });
});
