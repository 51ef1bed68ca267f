import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { freshIp, gateApp, LIMITS, request } from '../../../test/support/auth-gate.ts';

// The request gate's authentication rules (authenticate.ts), on a small in-process app with the
// real database, signer, limiter and gate cache (test/support/auth-gate.ts): how the bearer header
// is read, which keys and sessions pass, what the cache serves, which bucket counts a request and
// the headers a refusal carries. authenticate-scopes.test.ts covers the workspace and scope rules;
// test/api-key-auth.test.ts and test/scopes.test.ts drive the same gate through the whole app.

const ENDED = 'Bearer error="invalid_token"';

function assertProblem(res: LightMyRequestResponse, status: number, code: string, detail: string) {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.json().code, code, res.body);
  assert.equal(res.json().detail, detail, res.body);
}

/** A 401 for a missing, malformed or unknown credential: `WWW-Authenticate: Bearer`. */
function assertUnauthorized(res: LightMyRequestResponse, detail: string) {
  assertProblem(res, 401, 'unauthorized', detail);
  assert.equal(res.headers['www-authenticate'], 'Bearer');
}

const NO_BEARER = 'send Authorization: Bearer <access token or API key>';
const BAD_KEY = 'the API key is invalid or revoked';
const ENDED_DETAIL = 'the session of this access token has ended; log in again';

describe('the gate reads the bearer header', async () => {
  const g = await gateApp();
  const owner = await g.tenant();
  const key = await g.apiKey(owner.workspaceId, 'write');

  it('takes `Bearer` in any case, with any run of spaces before the one token', async () => {
    for (const authorization of [`Bearer ${key.key}`, `bearer ${key.key}`, `BEARER  ${key.key}`, `Bearer \t${key.key}`]) {
      const res = await request(g.app, 'GET', '/ws/read', { authorization });
      assert.equal(res.statusCode, 200, `${JSON.stringify(authorization)}: ${res.body}`);
    }
  });

  it('refuses no header, no token, two tokens, or a word before Bearer (401 with WWW-Authenticate: Bearer)', async () => {
    assertUnauthorized(await request(g.app, 'GET', '/ws/read'), NO_BEARER);
    for (const authorization of ['Bearer', 'Bearer ', `Bearer${key.key}`, `Bearer ${key.key} ${key.key}`, `Bearer ${key.key} x`, `xBearer ${key.key}`, `Basic ${key.key}`, key.key]) {
      assertUnauthorized(await request(g.app, 'GET', '/ws/read', { authorization }), NO_BEARER);
    }
  });
});

describe('the gate checks API keys', async () => {
  const g = await gateApp();
  const owner = await g.tenant();

  it('refuses a malformed key, an unknown one and a revoked one alike', async () => {
    const good = await g.apiKey(owner.workspaceId, 'write');
    const revoked = await g.apiKey(owner.workspaceId, 'write', { revokedAt: g.clock.now() });
    const unknown = `${good.key.slice(0, -8)}${good.key.slice(-8).split('').reverse().join('')}`;
    for (const token of ['sk_short', `sk_${'a'.repeat(46)}`, unknown, revoked.key]) {
      assertUnauthorized(await request(g.app, 'GET', '/ws/read', { token }), BAD_KEY);
    }
  });

  it('refuses a key whose checksum is wrong before any lookup, even if its hash were stored', async () => {
    // `sk_` + 46 base62 characters whose last six are not the CRC of the first 40.
    const malformed = `sk_${'A'.repeat(40)}zzzzzz`;
    await g.apiKey(owner.workspaceId, 'admin', { key: malformed });
    assertUnauthorized(await request(g.app, 'GET', '/ws/read', { token: malformed }), BAD_KEY);
  });

  it('serves a key from the cache once looked up; an invalid key is looked up again each time', async () => {
    const key = await g.apiKey(owner.workspaceId, 'write', { revokedAt: g.clock.now() });
    assertUnauthorized(await request(g.app, 'GET', '/ws/read', { token: key.key }), BAD_KEY);
    await g.db.updateTable('api_keys').set({ revoked_at: null }).where('id', '=', key.id).execute();
    assert.equal((await request(g.app, 'GET', '/ws/read', { token: key.key })).statusCode, 200, 'the revoked verdict was not kept');
    // Revoked behind the gate's back (no gate event published): the cached verdict still serves.
    await g.db.updateTable('api_keys').set({ revoked_at: g.clock.now() }).where('id', '=', key.id).execute();
    const cached = await request(g.app, 'GET', '/ws/read', { token: key.key });
    assert.equal(cached.statusCode, 200, cached.body);
    assert.deepEqual(cached.json().workspace, { workspaceId: owner.workspaceId, scope: 'write', actor: { type: 'api_key', id: key.id, name: key.name } });
  });

  it("notes the key's use with the caller's address, user agent and request id", async () => {
    const key = await g.apiKey(owner.workspaceId, 'read-only');
    const ip = freshIp();
    const res = await request(g.app, 'GET', '/ws/read', { token: key.key, ip, headers: { 'user-agent': 'gate-rules/1.0' } });
    assert.equal(res.statusCode, 200, res.body);
    await g.keyUsage.flush();
    const row = await g.db.selectFrom('audit_log').selectAll().where('actor_id', '=', key.id).executeTakeFirstOrThrow();
    assert.deepEqual(
      { workspace: row.workspace_id, name: row.actor_name, ip: row.ip, agent: row.user_agent, request: row.request_id },
      { workspace: owner.workspaceId, name: key.name, ip, agent: 'gate-rules/1.0', request: res.json().requestId },
    );
  });
});

describe('the gate checks sessions', async () => {
  const g = await gateApp();

  it('refuses a revoked session, an unknown one, and a token whose user is not the session\'s (401 invalid_token)', async () => {
    const ada = await g.tenant();
    const other = await g.user();
    const revoked = await g.session(ada.id, { revokedAt: g.clock.now() });
    const unknown = 'ses_00000000000000000000000000';
    for (const token of [await g.token(ada.id, revoked), await g.token(ada.id, unknown), await g.token(other.id, ada.sessionId)]) {
      const res = await request(g.app, 'GET', '/me', { token });
      assertProblem(res, 401, 'invalid_token', ENDED_DETAIL);
      assert.equal(res.headers['www-authenticate'], ENDED);
    }
  });

  it('a session ends at its expires_at exactly: open 1 ms before, ended at it (looked up, then cached)', async () => {
    const ada = await g.user();
    const ends = new Date(g.clock.now().getTime() + 30_000);
    const sessionId = await g.session(ada.id, { expiresAt: ends });
    const token = await g.token(ada.id, sessionId);
    assert.equal((await request(g.app, 'GET', '/me', { token })).statusCode, 200);
    g.clock.set(new Date(ends.getTime() - 1));
    assert.equal((await request(g.app, 'GET', '/me', { token })).statusCode, 200, 'open 1 ms before its end (cached)');
    g.clock.set(ends);
    assertProblem(await request(g.app, 'GET', '/me', { token }), 401, 'invalid_token', ENDED_DETAIL);
    // Looked up afresh (another session ending now): ended too.
    const fresh = await g.session(ada.id, { expiresAt: g.clock.now() });
    assertProblem(await request(g.app, 'GET', '/me', { token: await g.token(ada.id, fresh) }), 401, 'invalid_token', ENDED_DETAIL);
  });

  it('keeps a session read at the instant it ends out of the cache', async () => {
    const ada = await g.user();
    const sessionId = await g.session(ada.id, { expiresAt: g.clock.now() });
    const token = await g.token(ada.id, sessionId);
    assertProblem(await request(g.app, 'GET', '/me', { token }), 401, 'invalid_token', ENDED_DETAIL);
    // The clock set back a moment (another instance's clock, a correction) and the session revoked
    // meanwhile: a verdict kept from the first request would let it through.
    const at = g.clock.now();
    g.clock.set(new Date(at.getTime() - 1));
    await g.db.updateTable('sessions').set({ revoked_at: at }).where('id', '=', sessionId).execute();
    const res = await request(g.app, 'GET', '/me', { token });
    g.clock.set(at);
    assertProblem(res, 401, 'invalid_token', ENDED_DETAIL);
  });

  it('serves a session from the cache once looked up; a revoked one is looked up again each time', async () => {
    const ada = await g.user('Ada');
    const sessionId = await g.session(ada.id, { revokedAt: g.clock.now() });
    const token = await g.token(ada.id, sessionId);
    assert.equal((await request(g.app, 'GET', '/me', { token })).statusCode, 401);
    await g.db.updateTable('sessions').set({ revoked_at: null }).where('id', '=', sessionId).execute();
    const open = await request(g.app, 'GET', '/me', { token });
    assert.equal(open.statusCode, 200, 'the revoked verdict was not kept');
    assert.deepEqual(open.json().user, { type: 'user', userId: ada.id, sessionId, email: ada.email, name: 'Ada' });
    await g.db.updateTable('sessions').set({ revoked_at: g.clock.now() }).where('id', '=', sessionId).execute();
    assert.equal((await request(g.app, 'GET', '/me', { token })).statusCode, 200, 'served from the cache');
  });

  it("notes the session's use (its last_used_at)", async () => {
    const ada = await g.user();
    const long = new Date(g.clock.now().getTime() - 3_600_000);
    const sessionId = await g.session(ada.id, { lastUsedAt: long });
    assert.equal((await request(g.app, 'GET', '/me', { token: await g.token(ada.id, sessionId) })).statusCode, 200);
    await g.keyUsage.flush();
    const row = await g.db.selectFrom('sessions').select('last_used_at').where('id', '=', sessionId).executeTakeFirstOrThrow();
    assert.equal(new Date(row.last_used_at).getTime(), g.clock.now().getTime());
  });
});

describe('the gate counts requests against rate-limit buckets', async () => {
  const g = await gateApp();
  const limitOf = (res: LightMyRequestResponse) => [res.headers['ratelimit-limit'], res.headers['ratelimit-remaining']];

  it('public routes: per IP by default and with limit ip, the demo bucket with limit demo, none with limit none', async () => {
    const ip = freshIp();
    assert.deepEqual(limitOf(await request(g.app, 'GET', '/public/default', { ip })), [String(LIMITS.ipPerMin), String(LIMITS.ipPerMin - 1)]);
    assert.deepEqual(limitOf(await request(g.app, 'GET', '/public/ip', { ip })), [String(LIMITS.ipPerMin), String(LIMITS.ipPerMin - 2)]);
    assert.deepEqual(limitOf(await request(g.app, 'GET', '/public/demo', { ip })), [String(LIMITS.demoPerMin), String(LIMITS.demoPerMin - 1)]);
    const none = await request(g.app, 'GET', '/public/none', { ip });
    assert.equal(none.statusCode, 200);
    assert.equal(none.headers['ratelimit-limit'], undefined);
    assert.deepEqual(none.json(), { principal: null, signedLink: false, requestId: none.json().requestId });
    assert.equal((await request(g.app, 'GET', '/open', { ip })).headers['ratelimit-limit'], undefined, 'a route without access is not gated');
  });

  it('an exhausted bucket answers 429 rate_limited with its limit and reset, and Retry-After', async () => {
    const ip = freshIp();
    for (let i = 0; i < LIMITS.demoPerMin; i++) assert.equal((await request(g.app, 'GET', '/public/demo', { ip })).statusCode, 200);
    const res = await request(g.app, 'GET', '/public/demo', { ip });
    const reset = res.headers['retry-after'];
    assert.match(String(reset), /^\d+$/);
    assertProblem(res, 429, 'rate_limited', `rate limit of ${LIMITS.demoPerMin} requests per minute exceeded; retry after ${reset} s`);
    assert.equal(res.headers['ratelimit-remaining'], '0');
  });

  it('a failed authentication (401) counts against the IP bucket; a request that fails otherwise does not', async () => {
    const ip = freshIp();
    const refused = await request(g.app, 'GET', '/ws/read', { ip, token: 'sk_nope' });
    assert.equal(refused.statusCode, 401);
    assert.deepEqual(limitOf(refused), [String(LIMITS.ipPerMin), String(LIMITS.ipPerMin - 1)]);
    // A session id PostgreSQL cannot store (U+0000) fails the lookup itself: a 500, not counted.
    const ada = await g.user();
    const broken = await request(g.app, 'GET', '/me', { ip, token: await g.token(ada.id, 'ses_\u0000') });
    assert.equal(broken.statusCode, 500, broken.body);
    assert.equal(broken.headers['ratelimit-limit'], undefined);
    assert.deepEqual(limitOf(await request(g.app, 'GET', '/public/ip', { ip })), [String(LIMITS.ipPerMin), String(LIMITS.ipPerMin - 2)]);
  });

  it('an authenticated request counts against its principal: one bucket per user (not per session), one per key', async () => {
    const ada = await g.tenant();
    const bob = await g.tenant();
    const second = await g.token(ada.id, await g.session(ada.id));
    const remaining = async (token: string) => (await request(g.app, 'GET', '/ws/read', { token })).headers['ratelimit-remaining'];
    assert.equal(await remaining(ada.token), String(LIMITS.principalPerMin - 1));
    assert.equal(await remaining(second), String(LIMITS.principalPerMin - 2));
    assert.equal(await remaining(bob.token), String(LIMITS.principalPerMin - 1));
    const one = await g.apiKey(ada.workspaceId, 'write');
    const two = await g.apiKey(ada.workspaceId, 'write');
    for (let i = 1; i <= LIMITS.principalPerMin; i++) assert.equal(await remaining(one.key), String(LIMITS.principalPerMin - i));
    const over = await request(g.app, 'GET', '/ws/read', { token: one.key });
    assertProblem(over, 429, 'rate_limited', `rate limit of ${LIMITS.principalPerMin} requests per minute exceeded; retry after ${over.headers['retry-after']} s`);
    assert.equal(await remaining(two.key), String(LIMITS.principalPerMin - 1));
  });

  it('a refused request (403, 404) carries the RateLimit headers of its principal', async () => {
    const ada = await g.tenant('viewer');
    const forbidden = await request(g.app, 'POST', '/ws/read', { token: ada.token });
    assert.equal(forbidden.statusCode, 403);
    assert.deepEqual(limitOf(forbidden), [String(LIMITS.principalPerMin), String(LIMITS.principalPerMin - 1)]);
    const missing = await request(g.app, 'GET', '/ws/read', { token: ada.token, headers: { 'x-workspace-id': 'ws_elsewhere' } });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(limitOf(missing), [String(LIMITS.principalPerMin), String(LIMITS.principalPerMin - 2)]);
    assert.equal(missing.headers['ratelimit-policy'], `${LIMITS.principalPerMin};w=60`);
  });
});

describe('signed links, routes without access, workspaceOf and userOf', async () => {
  const g = await gateApp();

  it('a signedLink route passes a request carrying signature or expires without credentials, counted per IP', async () => {
    for (const query of ['signature=abc', 'expires=123', 'expires=123&signature=abc']) {
      const res = await request(g.app, 'GET', `/ws/signed?${query}`);
      assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
      assert.deepEqual(res.json(), { principal: null, signedLink: true, requestId: res.json().requestId });
      assert.equal(res.headers['x-test-workspace'], 'null');
      assert.equal(res.headers['ratelimit-limit'], String(LIMITS.ipPerMin));
    }
    assertUnauthorized(await request(g.app, 'GET', '/ws/signed?other=1'), NO_BEARER);
    assertUnauthorized(await request(g.app, 'GET', '/ws/read?signature=abc&expires=123'), NO_BEARER);
  });

  it('a credential on a signedLink route without the parameters is checked as on any route', async () => {
    const ada = await g.tenant();
    const res = await request(g.app, 'GET', '/ws/signed', { token: ada.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().signedLink, false);
    assert.equal(JSON.parse(String(res.headers['x-test-workspace'])).workspaceId, ada.workspaceId);
  });

  it('a route without access is not gated; workspaceOf there is a 500 naming the missing context', async () => {
    const open = await request(g.app, 'GET', '/open', { token: 'sk_not_even_checked' });
    assert.equal(open.statusCode, 200, open.body);
    assertProblem(await request(g.app, 'GET', '/open/workspace'), 500, 'internal', 'route has no workspace context');
  });

  it('userOf refuses an API key and an anonymous caller (403), and gives the user of a JWT', async () => {
    const ada = await g.tenant();
    const key = await g.apiKey(ada.workspaceId, 'admin');
    assertProblem(await request(g.app, 'GET', '/ws/user', { token: key.key }), 403, 'forbidden', 'this operation needs a user access token (JWT)');
    assertProblem(await request(g.app, 'GET', '/public/user'), 403, 'forbidden', 'this operation needs a user access token (JWT)');
    const res = await request(g.app, 'GET', '/ws/user', { token: ada.token });
    assert.deepEqual(res.json().user, { type: 'user', userId: ada.id, sessionId: ada.sessionId, email: ada.email, name: ada.name });
  });
});
