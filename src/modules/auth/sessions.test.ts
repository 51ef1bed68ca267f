import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { sha256Hex } from '../../platform/secrets.ts';
import { assertNoSecrets } from './test-support.ts';

describe('sessions', async () => {
  const t = await buildTestApp();
  const login = (email: string, password: string, userAgent: string) =>
    t.request({ method: 'POST', url: '/v1/auth/login', payload: { email, password }, headers: { 'user-agent': userAgent } });
  const list = (token: string, query = '') => t.request({ method: 'GET', url: `/v1/auth/sessions${query}`, token });
  const sessionIdOf = async (refreshToken: string) =>
    (await t.platform.db.selectFrom('refresh_tokens').select('session_id').where('token_hash', '=', sha256Hex(refreshToken)).executeTakeFirstOrThrow()).session_id;

  it('lists the active sessions newest first, marks the current one, and pages with a cursor', async () => {
    const user = await signUp(t);
    const phone = await login(user.email, user.password, 'PhoneApp/1.0');
    const laptop = await login(user.email, user.password, 'Laptop Browser');
    const ended = await login(user.email, user.password, 'Ended');
    assert.equal((await t.request({ method: 'POST', url: '/v1/auth/logout', token: ended.json().access_token })).statusCode, 204);
    const ids = [await sessionIdOf(user.refreshToken), await sessionIdOf(phone.json().refresh_token), await sessionIdOf(laptop.json().refresh_token)];

    const res = await list(phone.json().access_token);
    assert.equal(res.statusCode, 200, res.body);
    assertNoSecrets(res);
    const body = res.json();
    assert.equal(body.has_more, false);
    assert.equal(body.next_cursor, null);
    assert.deepEqual(body.data.map((s: { id: string }) => s.id), [...ids].reverse(), 'newest first, the ended session left out');
    const [laptopItem, phoneItem] = body.data;
    assert.deepEqual(Object.keys(phoneItem).sort(), ['created_at', 'current', 'device', 'id', 'ip', 'last_used_at']);
    assert.equal(phoneItem.device, 'PhoneApp/1.0');
    assert.equal(phoneItem.ip, '127.0.0.1');
    assert.equal(phoneItem.current, true);
    assert.equal(laptopItem.device, 'Laptop Browser');
    assert.equal(laptopItem.current, false);
    assert.match(phoneItem.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(body.data.filter((s: { current: boolean }) => s.current).length, 1);

    const first = await list(user.accessToken, '?limit=2');
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json().data.map((s: { id: string }) => s.id), [ids[2], ids[1]]);
    assert.equal(first.json().has_more, true);
    const second = await list(user.accessToken, `?limit=2&cursor=${first.json().next_cursor}`);
    assert.deepEqual(second.json().data.map((s: { id: string }) => s.id), [ids[0]]);
    assert.equal(second.json().has_more, false);
    assert.equal(second.json().data[0].current, true);
  });

  it('shows only the caller’s own sessions', async () => {
    const user = await signUp(t);
    const other = await signUp(t);
    const res = await list(user.accessToken);
    assert.deepEqual(res.json().data.map((s: { id: string }) => s.id), [await sessionIdOf(user.refreshToken)]);
    assert.equal((await list(other.accessToken)).json().data[0].id, await sessionIdOf(other.refreshToken));
  });

  it('answers 422 for a limit out of range and a bad cursor', async () => {
    const user = await signUp(t);
    const big = await list(user.accessToken, '?limit=101');
    assert.equal(big.statusCode, 422, big.body);
    assert.deepEqual(big.json().errors.map((e: { path: string }) => e.path), ['query.limit']);
    const zero = await list(user.accessToken, '?limit=0');
    assert.equal(zero.statusCode, 422);
    const cursor = await list(user.accessToken, '?cursor=garbage');
    assert.equal(cursor.statusCode, 422, cursor.body);
    assert.deepEqual(cursor.json().errors.map((e: { path: string }) => e.path), ['query.cursor']);
  });

  it('revokes one session: its tokens stop working, the others stay', async () => {
    const user = await signUp(t);
    const laptop = await login(user.email, user.password, 'Laptop');
    const laptopId = await sessionIdOf(laptop.json().refresh_token);
    const res = await t.request({ method: 'DELETE', url: `/v1/auth/sessions/${laptopId}`, token: user.accessToken });
    assert.equal(res.statusCode, 204, res.body);
    const row = await t.platform.db.selectFrom('sessions').selectAll().where('id', '=', laptopId).executeTakeFirstOrThrow();
    assert.ok(row.revoked_at);
    assert.equal(row.revoked_reason, 'revoked_by_user');
    const dead = await t.request({ method: 'GET', url: '/v1/auth/me', token: laptop.json().access_token });
    assert.equal(dead.statusCode, 401);
    assert.equal((await t.request({ method: 'POST', url: '/v1/auth/refresh', payload: { refresh_token: laptop.json().refresh_token } })).statusCode, 401);
    assert.equal((await t.request({ method: 'GET', url: '/v1/auth/me', token: user.accessToken })).statusCode, 200);
    assert.deepEqual((await list(user.accessToken)).json().data.map((s: { id: string }) => s.id), [await sessionIdOf(user.refreshToken)]);
    // Revoking it again: it is no longer an active session.
    const again = await t.request({ method: 'DELETE', url: `/v1/auth/sessions/${laptopId}`, token: user.accessToken });
    assert.equal(again.statusCode, 404);
    assert.equal(again.json().code, 'not_found');
  });

  it('answers 404 for another user’s session and leaves it alone', async () => {
    const user = await signUp(t);
    const stranger = await signUp(t);
    const strangerSession = await sessionIdOf(stranger.refreshToken);
    const res = await t.request({ method: 'DELETE', url: `/v1/auth/sessions/${strangerSession}`, token: user.accessToken });
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(res.json().code, 'not_found');
    assert.equal((await t.request({ method: 'GET', url: '/v1/auth/me', token: stranger.accessToken })).statusCode, 200);
    const unknown = await t.request({ method: 'DELETE', url: '/v1/auth/sessions/ses_00000000000000000000000000', token: user.accessToken });
    assert.equal(unknown.statusCode, 404);
  });

  it('revoking the current session works like logout', async () => {
    const user = await signUp(t);
    const res = await t.request({ method: 'DELETE', url: `/v1/auth/sessions/${await sessionIdOf(user.refreshToken)}`, token: user.accessToken });
    assert.equal(res.statusCode, 204);
    assert.equal((await t.request({ method: 'GET', url: '/v1/auth/me', token: user.accessToken })).statusCode, 401);
  });
});
