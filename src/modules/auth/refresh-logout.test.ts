import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { manualClock } from '../../platform/clock.ts';
import { sha256Hex } from '../../platform/secrets.ts';
import { assertNoSecrets } from './test-support.ts';

const ACCESS_TTL_SECONDS = 3600;
const REFRESH_TTL_SECONDS = 30 * 86_400;

describe('refresh, logout and token expiry', async () => {
  const clock = manualClock();
  const t = await buildTestApp({ clock, env: { ACCESS_TOKEN_TTL_SECONDS: String(ACCESS_TTL_SECONDS), REFRESH_TOKEN_TTL_SECONDS: String(REFRESH_TTL_SECONDS) } });
  const refresh = (refreshToken: string) => t.request({ method: 'POST', url: '/v1/auth/refresh', payload: { refresh_token: refreshToken } });
  const me = (accessToken: string) => t.request({ method: 'GET', url: '/v1/auth/me', token: accessToken });
  const session = (id: string) => t.platform.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const refreshRow = (token: string) => t.platform.db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
  const sessionIdOf = async (refreshToken: string) => (await refreshRow(refreshToken))?.session_id ?? assert.fail('no refresh token row');

  it('rotates the refresh token in the same session and the new pair works', async () => {
    const user = await signUp(t);
    const sessionId = await sessionIdOf(user.refreshToken);
    clock.advance(5_000);
    const res = await refresh(user.refreshToken);
    assert.equal(res.statusCode, 200, res.body);
    assertNoSecrets(res);
    assert.ok(res.headers['ratelimit-policy'], 'counted in the per-IP bucket');
    const pair = res.json();
    assert.equal(pair.token_type, 'Bearer');
    assert.equal(pair.expires_in, ACCESS_TTL_SECONDS);
    assert.match(pair.refresh_token, /^rt_/);
    assert.notEqual(pair.refresh_token, user.refreshToken);
    assert.notEqual(pair.access_token, user.accessToken);

    const old = await refreshRow(user.refreshToken);
    assert.equal(old?.used_at?.toISOString(), clock.now().toISOString());
    const fresh = await refreshRow(pair.refresh_token);
    assert.equal(fresh?.session_id, sessionId);
    assert.equal(fresh?.used_at, null);
    // Only hashes are stored.
    const stored = await t.platform.db.selectFrom('refresh_tokens').select('token_hash').where('session_id', '=', sessionId).execute();
    assert.equal(stored.length, 2);
    assert.ok(stored.every((r) => !r.token_hash.startsWith('rt_')));
    // The session keeps its absolute expiry; the rotated token inherits it.
    const row = await session(sessionId);
    assert.equal(fresh?.expires_at.toISOString(), row.expires_at.toISOString());
    assert.equal(row.last_used_at.toISOString(), clock.now().toISOString());

    const who = await me(pair.access_token);
    assert.equal(who.statusCode, 200, who.body);
    assert.equal(who.json().id, user.id);
    const again = await refresh(pair.refresh_token);
    assert.equal(again.statusCode, 200, again.body);
  });

  it('revokes the whole session when a rotated refresh token is reused (RFC 9700)', async () => {
    const user = await signUp(t);
    const sessionId = await sessionIdOf(user.refreshToken);
    const first = await refresh(user.refreshToken);
    assert.equal(first.statusCode, 200, first.body);
    const pair = first.json();

    const reuse = await refresh(user.refreshToken);
    assert.equal(reuse.statusCode, 401, reuse.body);
    assert.equal(reuse.json().code, 'invalid_token');
    assert.equal(reuse.headers['content-type'], 'application/problem+json; charset=utf-8');

    const row = await session(sessionId);
    assert.ok(row.revoked_at, 'session revoked');
    assert.equal(row.revoked_reason, 'refresh_token_reuse');
    // Everything issued in that session stops working: the legitimate holder's new pair too.
    const newRefresh = await refresh(pair.refresh_token);
    assert.equal(newRefresh.statusCode, 401, newRefresh.body);
    const newAccess = await me(pair.access_token);
    assert.equal(newAccess.statusCode, 401, newAccess.body);
    assert.equal(newAccess.json().code, 'invalid_token');
    assert.equal(newAccess.headers['www-authenticate'], 'Bearer error="invalid_token"');
  });

  it('two concurrent uses of one refresh token: one wins, the other counts as reuse and ends the session', async () => {
    const user = await signUp(t);
    const sessionId = await sessionIdOf(user.refreshToken);
    const answers = await Promise.all([refresh(user.refreshToken), refresh(user.refreshToken)]);
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [200, 401]);
    assert.equal((await session(sessionId)).revoked_reason, 'refresh_token_reuse');
  });

  it('a reuse revokes only that session, not the other sessions of the user', async () => {
    const user = await signUp(t);
    const other = await t.request({ method: 'POST', url: '/v1/auth/login', payload: { email: user.email, password: user.password } });
    assert.equal(other.statusCode, 200);
    assert.equal((await refresh(user.refreshToken)).statusCode, 200);
    assert.equal((await refresh(user.refreshToken)).statusCode, 401);
    assert.equal((await me(other.json().access_token)).statusCode, 200);
    assert.equal((await refresh(other.json().refresh_token)).statusCode, 200);
  });

  it('answers 401 for an unknown refresh token, and 422 naming a missing or unknown field', async () => {
    const unknown = await refresh('rt_not-a-real-token');
    assert.equal(unknown.statusCode, 401, unknown.body);
    assert.equal(unknown.json().code, 'invalid_token');

    const bad = await t.request({ method: 'POST', url: '/v1/auth/refresh', payload: { refreshToken: 'x' } });
    assert.equal(bad.statusCode, 422, bad.body);
    assert.equal(bad.json().code, 'validation_failed');
    assert.deepEqual(bad.json().errors.map((e: { path: string }) => e.path).sort(), ['refreshToken', 'refresh_token']);
    const empty = await t.request({ method: 'POST', url: '/v1/auth/refresh', payload: { refresh_token: '' } });
    assert.equal(empty.statusCode, 422);
    assert.deepEqual(empty.json().errors.map((e: { path: string }) => e.path), ['refresh_token']);
  });

  it('an expired access token is 401 token_expired with the RFC 6750 header; refresh then works', async () => {
    const user = await signUp(t);
    clock.advance((ACCESS_TTL_SECONDS + 1) * 1000);
    const expired = await me(user.accessToken);
    assert.equal(expired.statusCode, 401, expired.body);
    assert.equal(expired.json().code, 'token_expired');
    assert.equal(expired.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="token_expired"');
    const res = await refresh(user.refreshToken);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await me(res.json().access_token)).statusCode, 200);
  });

  it('a refresh token stops working when its session expires', async () => {
    const user = await signUp(t);
    clock.advance((REFRESH_TTL_SECONDS - 60) * 1000);
    const stillValid = await refresh(user.refreshToken);
    assert.equal(stillValid.statusCode, 200, stillValid.body);
    clock.advance(120_000);
    const res = await refresh(stillValid.json().refresh_token);
    assert.equal(res.statusCode, 401, res.body);
    assert.equal(res.json().code, 'invalid_token');
  });

  it('an access token still within its lifetime is refused (401 invalid_token) once its session has expired', async () => {
    const user = await signUp(t);
    clock.advance((REFRESH_TTL_SECONDS - 60) * 1000);
    const refreshed = await refresh(user.refreshToken);
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const accessToken: string = refreshed.json().access_token;
    assert.equal((await me(accessToken)).statusCode, 200, 'the session has a minute left');
    const workspace = { method: 'GET' as const, url: '/v1/agents', token: accessToken };
    assert.equal((await t.request(workspace)).statusCode, 200);
    clock.advance(120_000); // the session ended a minute ago; the access token has 58 minutes left
    const ended = await me(accessToken);
    assert.equal(ended.statusCode, 401, ended.body);
    assert.equal(ended.json().code, 'invalid_token');
    assert.equal(ended.headers['www-authenticate'], 'Bearer error="invalid_token"');
    const inWorkspace = await t.request(workspace);
    assert.equal(inWorkspace.statusCode, 401, inWorkspace.body);
    assert.equal(inWorkspace.json().code, 'invalid_token');
  });

  it('logout revokes the session: its access and refresh tokens stop working at once', async () => {
    const user = await signUp(t);
    const sessionId = await sessionIdOf(user.refreshToken);
    const other = await t.request({ method: 'POST', url: '/v1/auth/login', payload: { email: user.email, password: user.password } });
    const res = await t.request({ method: 'POST', url: '/v1/auth/logout', token: user.accessToken });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    const row = await session(sessionId);
    assert.equal(row.revoked_at?.toISOString(), clock.now().toISOString());
    assert.equal(row.revoked_reason, 'logout');

    const after = await me(user.accessToken);
    assert.equal(after.statusCode, 401);
    assert.equal(after.json().code, 'invalid_token');
    const refreshed = await refresh(user.refreshToken);
    assert.equal(refreshed.statusCode, 401);
    // A session revoked by logout is not "reused": the refresh is refused, nothing else changes.
    assert.equal((await session(sessionId)).revoked_reason, 'logout');
    // The user's other session is untouched.
    assert.equal((await me(other.json().access_token)).statusCode, 200);
    // Logging out again with the dead token is a 401, not a second revocation.
    assert.equal((await t.request({ method: 'POST', url: '/v1/auth/logout', token: user.accessToken })).statusCode, 401);
  });
});
