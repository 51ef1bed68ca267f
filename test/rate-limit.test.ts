import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { createRateLimiter } from '../src/platform/rate-limit.ts';
import { buildTestApp, type TestApp } from './support/app.ts';
import { createApiKey, signUp, uniqueEmail } from './support/fixtures.ts';

// Rate limits (DESIGN part 4): one bucket per principal on authenticated routes, one per IP on
// public routes; RateLimit-* headers on every limited response, Retry-After on the 429. In-process
// by default, and in Redis shared by every instance. Each test uses fresh users and a fresh client
// IP (app.inject's remoteAddress), so runs against the shared Redis never meet.

// The Redis cases need a real Redis: TEST_REDIS_URL, by default the local one (CI starts it).
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const LIMITS = { RATE_LIMIT_USER_PER_MIN: '3', RATE_LIMIT_IP_PER_MIN: '3' };
const uniqueIp = () => `10.${[...randomBytes(3)].join('.')}`;

function assertAllowed(res: { statusCode: number; body: string; headers: Record<string, unknown> }, remaining: number, limit = 3) {
  assert.notEqual(res.statusCode, 429, res.body);
  assert.equal(res.headers['ratelimit-limit'], String(limit));
  assert.equal(res.headers['ratelimit-remaining'], String(remaining));
  assert.equal(res.headers['ratelimit-policy'], `${limit};w=60`);
  const reset = Number(res.headers['ratelimit-reset']);
  assert.ok(Number.isInteger(reset) && reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`);
  assert.equal(res.headers['retry-after'], undefined);
}

function assertLimited(res: { statusCode: number; body: string; headers: Record<string, unknown>; json(): { code: string } }, limit = 3) {
  assert.equal(res.statusCode, 429, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(res.json().code, 'rate_limited');
  assert.equal(res.headers['ratelimit-limit'], String(limit));
  assert.equal(res.headers['ratelimit-remaining'], '0');
  assert.equal(res.headers['ratelimit-policy'], `${limit};w=60`);
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${res.headers['retry-after']}`);
  assert.equal(res.headers['ratelimit-reset'], res.headers['retry-after']);
}

/** The behaviour both stores must show. */
function commonCases(getApp: () => TestApp) {
  it('limits a principal on authenticated routes: the 4th request in the minute is 429', async () => {
    const t = getApp();
    const user = await signUp(t, { remoteAddress: uniqueIp() });
    const key = await createApiKey(t, user, 'admin', 'limited'); // the user's 1st request
    assertAllowed(await t.request({ method: 'GET', url: '/v1/api-keys', token: user.accessToken }), 1);
    assertAllowed(await t.request({ method: 'GET', url: `/v1/api-keys/${key.id}`, token: user.accessToken }), 0);
    assertLimited(await t.request({ method: 'GET', url: '/v1/api-keys', token: user.accessToken }));
    const refused = await t.request({ method: 'POST', url: '/v1/api-keys', token: user.accessToken, payload: { name: 'x', scope: 'write' } });
    assertLimited(refused);
    const keys = await t.platform.db.selectFrom('api_keys').select('id').where('workspace_id', '=', user.workspaceId).execute();
    assert.equal(keys.length, 1, 'a limited request does nothing');
    // The user's API key is a principal of its own, and another user is untouched.
    assertAllowed(await t.request({ method: 'GET', url: '/v1/audit-log', token: key.key }), 2);
    const other = await signUp(t, { remoteAddress: uniqueIp() });
    assertAllowed(await t.request({ method: 'GET', url: '/v1/api-keys', token: other.accessToken }), 2);
  });

  it("counts the gate's refusals (403, 404) against the principal, with the headers", async () => {
    const t = getApp();
    const user = await signUp(t, { remoteAddress: uniqueIp() });
    const key = await createApiKey(t, user, 'admin', 'limited'); // the user's 1st request
    // Another workspace named by X-Workspace-Id: 404 from the gate.
    const foreign = await t.request({ method: 'GET', url: '/v1/api-keys', token: user.accessToken, workspaceId: 'ws_00000000000000000000000000' });
    assert.equal(foreign.statusCode, 404, foreign.body);
    assertAllowed(foreign, 1);
    // The key on a route that needs a user token (403 forbidden), then the user's last request.
    const byKey = await t.request({ method: 'GET', url: '/v1/api-keys', token: key.key });
    assert.equal(byKey.statusCode, 403, byKey.body);
    assert.equal(byKey.json().code, 'forbidden');
    assertAllowed(byKey, 2);
    assertAllowed(await t.request({ method: 'GET', url: '/v1/api-keys', token: user.accessToken }), 0);
    assertLimited(await t.request({ method: 'GET', url: '/v1/api-keys', token: user.accessToken, workspaceId: 'ws_00000000000000000000000000' }));
  });

  it('limits an IP on public routes, and never /v1/health', async () => {
    const t = getApp();
    const ip = uniqueIp();
    const login = (from: string) => t.request({ method: 'POST', url: '/v1/auth/login', payload: { email: uniqueEmail('nobody'), password: 'wrong password' }, remoteAddress: from });
    for (const remaining of [2, 1, 0]) {
      const res = await login(ip);
      assert.equal(res.statusCode, 401, res.body);
      assertAllowed(res, remaining);
    }
    assertLimited(await login(ip));
    assert.equal((await login(uniqueIp())).statusCode, 401, 'another IP has its own bucket');
    for (let i = 0; i < 5; i++) {
      const health = await t.request({ method: 'GET', url: '/v1/health', remoteAddress: ip });
      assert.equal(health.statusCode, 200, health.body);
      assert.equal(health.headers['ratelimit-limit'], undefined);
    }
  });
}

describe('rate limits, in-process', async () => {
  const t = await buildTestApp({ env: LIMITS });
  commonCases(() => t);

  it('keeps separate counts per instance (which is why several instances need Redis)', async () => {
    const second = await buildTestApp({ env: LIMITS }); // same database, own memory
    const user = await signUp(t, { remoteAddress: uniqueIp() });
    const key = await createApiKey(t, user, 'admin', 'limited');
    for (const remaining of [2, 1, 0]) assertAllowed(await t.request({ method: 'GET', url: '/v1/audit-log', token: key.key }), remaining);
    assertLimited(await t.request({ method: 'GET', url: '/v1/audit-log', token: key.key }));
    assertAllowed(await second.request({ method: 'GET', url: '/v1/audit-log', token: key.key }), 2);
  });

  it('documents 429 on limited operations and not on /v1/health', () => {
    const spec = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'openapi.json'), 'utf8'));
    assert.ok(spec.paths['/v1/api-keys'].post.responses['429']);
    assert.ok(spec.paths['/v1/auth/login'].post.responses['429']);
    assert.equal(spec.paths['/v1/health'].get.responses['429'], undefined);
  });
});

describe('rate limits, in Redis shared by two instances', async () => {
  const clients = [new Redis(REDIS_URL), new Redis(REDIS_URL)];
  after(async () => {
    await Promise.all(clients.map((c) => c.quit()));
  });
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    await Promise.all(clients.map((c) => c.ping())); // connected, so the shared store is in use from the first request
    a = await buildTestApp({ env: LIMITS, redis: clients[0] });
    b = await buildTestApp({ env: LIMITS, redis: clients[1] });
  });
  commonCases(() => a);

  it('two instances share one principal bucket', async () => {
    const user = await signUp(a, { remoteAddress: uniqueIp() });
    const key = await createApiKey(a, user, 'admin', 'limited'); // an API key works on both instances (same database)
    assertAllowed(await a.request({ method: 'GET', url: '/v1/audit-log', token: key.key }), 2);
    assertAllowed(await b.request({ method: 'GET', url: '/v1/audit-log', token: key.key }), 1);
    assertAllowed(await a.request({ method: 'GET', url: '/v1/audit-log', token: key.key }), 0);
    assertLimited(await b.request({ method: 'GET', url: '/v1/audit-log', token: key.key }));
    assertLimited(await a.request({ method: 'GET', url: '/v1/audit-log', token: key.key }));
  });

  it('two instances share one IP bucket on public routes', async () => {
    const ip = uniqueIp();
    const login = (t: TestApp) => t.request({ method: 'POST', url: '/v1/auth/login', payload: { email: uniqueEmail('nobody'), password: 'wrong password' }, remoteAddress: ip });
    assertAllowed(await login(a), 2);
    assertAllowed(await login(b), 1);
    assertAllowed(await login(b), 0);
    assertLimited(await login(a));
  });
});

describe('createRateLimiter (unit)', () => {
  const limits = { principalPerMin: 2, ipPerMin: 1, demoPerMin: 3 };

  it('counts each bucket and key on its own, with the headers of the decision', async () => {
    const limiter = createRateLimiter(limits);
    const first = await limiter.consume('principal', 'usr_a');
    assert.deepEqual({ ...first, resetSeconds: undefined, headers: { ...first.headers, 'RateLimit-Reset': undefined } }, {
      allowed: true,
      limit: 2,
      remaining: 1,
      resetSeconds: undefined,
      headers: { 'RateLimit-Limit': '2', 'RateLimit-Remaining': '1', 'RateLimit-Reset': undefined, 'RateLimit-Policy': '2;w=60' },
    });
    assert.equal(first.headers['RateLimit-Reset'], String(first.resetSeconds));
    assert.equal((await limiter.consume('principal', 'usr_a')).remaining, 0);
    const third = await limiter.consume('principal', 'usr_a');
    assert.equal(third.allowed, false);
    assert.equal(third.remaining, 0);
    assert.equal(third.headers['Retry-After'], String(third.resetSeconds));
    assert.ok(third.resetSeconds >= 1 && third.resetSeconds <= 60);
    assert.equal((await limiter.consume('principal', 'usr_b')).allowed, true, 'another key');
    const ip = await limiter.consume('ip', 'usr_a');
    assert.deepEqual([ip.allowed, ip.limit, ip.remaining], [true, 1, 0], 'another bucket, its own limit');
    assert.equal((await limiter.consume('ip', 'usr_a')).allowed, false);
    assert.equal((await limiter.consume('demo', 'usr_a')).limit, 3);
  });

  it('limiters on the same Redis share counts; another key prefix does not', async () => {
    const clients = [new Redis(REDIS_URL), new Redis(REDIS_URL)];
    try {
      await Promise.all(clients.map((c) => c.ping()));
      const prefix = `rltest:${randomBytes(6).toString('hex')}`;
      const one = createRateLimiter(limits, { redis: clients[0], keyPrefix: prefix });
      const two = createRateLimiter(limits, { redis: clients[1], keyPrefix: prefix });
      const elsewhere = createRateLimiter(limits, { redis: clients[1], keyPrefix: `${prefix}:other` });
      assert.equal((await one.consume('principal', 'k')).remaining, 1);
      assert.equal((await two.consume('principal', 'k')).remaining, 0);
      assert.equal((await one.consume('principal', 'k')).allowed, false);
      assert.equal((await elsewhere.consume('principal', 'k')).remaining, 1);
      const ttl = await clients[0].pttl(`${prefix}:principal:k`);
      assert.ok(ttl > 0 && ttl <= 60_000, `the window expires on its own (pttl ${ttl})`);
    } finally {
      await Promise.all(clients.map((c) => c.quit()));
    }
  });

  it('counts in-process while Redis is unreachable instead of failing requests', async () => {
    const down = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    down.on('error', () => {});
    try {
      const limiter = createRateLimiter(limits, { redis: down, keyPrefix: 'rltest:down' });
      const first = await limiter.consume('principal', 'k');
      assert.deepEqual([first.allowed, first.remaining], [true, 1]);
      assert.equal((await limiter.consume('principal', 'k')).remaining, 0);
      assert.equal((await limiter.consume('principal', 'k')).allowed, false);
    } finally {
      down.disconnect();
    }
  });
});

describe('rate limits behind a trusted proxy', async () => {
  const trusting = await buildTestApp({ env: { RATE_LIMIT_IP_PER_MIN: '1', TRUST_PROXY: 'true' } });
  const direct = await buildTestApp({ env: { RATE_LIMIT_IP_PER_MIN: '1' } });
  const login = (t: typeof direct, forwardedFor: string) =>
    t.request({ method: 'POST', url: '/v1/auth/login', remoteAddress: '10.9.9.9', headers: { 'x-forwarded-for': forwardedFor }, payload: { email: 'nobody@example.com', password: 'x' } });

  it('with TRUST_PROXY, buckets clients by X-Forwarded-For; without it, by the connecting address', async () => {
    assert.notEqual((await login(trusting, '198.51.100.1')).statusCode, 429);
    assert.notEqual((await login(trusting, '198.51.100.2')).statusCode, 429, 'another client behind the same proxy has its own bucket');
    assert.equal((await login(trusting, '198.51.100.1')).statusCode, 429);
    assert.notEqual((await login(direct, '198.51.100.1')).statusCode, 429);
    assert.equal((await login(direct, '198.51.100.2')).statusCode, 429, 'untrusted X-Forwarded-For is ignored: one bucket for the proxy');
  });
});

describe('failed authentication counts against the client IP', async () => {
  const t = await buildTestApp({ env: { RATE_LIMIT_IP_PER_MIN: '2' } });

  it('answers 401 until the IP bucket is spent, then 429 with Retry-After', async () => {
    const guess = () => t.request({ method: 'GET', url: '/v1/agents', remoteAddress: '203.0.113.7', headers: { authorization: `Bearer sk_${'A'.repeat(46)}` } });
    const first = await guess();
    assert.equal(first.statusCode, 401);
    assert.equal(first.headers['ratelimit-remaining'], '1');
    assert.equal((await guess()).statusCode, 401);
    const third = await guess();
    assert.equal(third.statusCode, 429, third.body);
    assert.equal(third.json().code, 'rate_limited');
    assert.match(String(third.headers['retry-after']), /^\d+$/);
    const otherClient = await t.request({ method: 'GET', url: '/v1/agents', remoteAddress: '203.0.113.8' });
    assert.equal(otherClient.statusCode, 401, 'another address has its own bucket');
  });
});
