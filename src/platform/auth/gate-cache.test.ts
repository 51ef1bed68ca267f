import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { otherHandle, usingPostgres } from '../../../test/support/database.ts';
import { createApiKey, signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { addMember } from '../../modules/invitations/testing.ts';
import { manualClock } from '../clock.ts';
import { sha256Hex } from '../secrets.ts';

// The gate's verdict cache (gate-cache.ts, gate-bus.ts): what it keeps is served without a query,
// and every change that ends or narrows a credential takes effect on the very next request, on
// this instance and on another one. On PostgreSQL the other instance has a database handle (a
// pool and a LISTEN connection) of its own, so the invalidation goes through NOTIFY; on PGlite
// the two instances share the handle, as two apps in one process would.

async function login(t: TestApp, user: TestUser): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/v1/auth/login', payload: { email: user.email, password: user.password } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().access_token;
}

describe('the gate cache across two instances', async () => {
  const a = await buildTestApp();
  const b = await buildTestApp({ database: await otherHandle(), jwtSecret: a.jwtSecret });

  const me = (t: TestApp, token: string) => t.request({ method: 'GET', url: '/v1/auth/me', token });
  const agents = (t: TestApp, token: string, workspaceId?: string) => t.request({ method: 'GET', url: '/v1/agents', token, workspaceId });

  it('serves a key from the cache, and a revoked key is a 401 on the very next request on either instance', async () => {
    const owner = await signUp(a);
    const key = await createApiKey(a, owner, 'write');
    assert.equal((await agents(b, key.key)).statusCode, 200);
    assert.ok(b.platform.gate.cache.key(sha256Hex(key.key)), 'instance b keeps the verdict');
    assert.equal((await agents(a, key.key)).statusCode, 200);

    const revoked = await a.request({ method: 'DELETE', url: `/v1/api-keys/${key.id}`, token: owner.accessToken });
    assert.equal(revoked.statusCode, 204, revoked.body);
    assert.equal((await agents(b, key.key)).statusCode, 401);
    assert.equal((await agents(a, key.key)).statusCode, 401);
  });

  it('a renamed key is read again, so the next request carries its new name', async () => {
    const owner = await signUp(a);
    const key = await createApiKey(a, owner, 'write', 'old name');
    assert.equal((await agents(b, key.key)).statusCode, 200);
    const renamed = await a.request({ method: 'PATCH', url: `/v1/api-keys/${key.id}`, token: owner.accessToken, payload: { name: 'new name' } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(b.platform.gate.cache.key(sha256Hex(key.key)), undefined, 'instance b dropped the old name');
    assert.equal((await agents(b, key.key)).statusCode, 200);
    assert.equal(b.platform.gate.cache.key(sha256Hex(key.key))?.name, 'new name');
  });

  it('logout ends the session on the other instance at once', async () => {
    const user = await signUp(a);
    assert.equal((await me(b, user.accessToken)).statusCode, 200);
    assert.equal((await me(b, user.accessToken)).statusCode, 200);
    const out = await a.request({ method: 'POST', url: '/v1/auth/logout', token: user.accessToken });
    assert.equal(out.statusCode, 204, out.body);
    assert.equal((await me(b, user.accessToken)).statusCode, 401);
    assert.equal((await me(a, user.accessToken)).statusCode, 401);
  });

  it('a revoked session and a password change end those sessions at once; the others go on', async () => {
    const user = await signUp(a);
    const second = await login(a, user);
    const third = await login(a, user);
    for (const token of [user.accessToken, second, third]) assert.equal((await me(b, token)).statusCode, 200);

    const sessions = await a.request({ method: 'GET', url: '/v1/auth/sessions', token: user.accessToken });
    const sid = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid as string;
    assert.ok(sessions.json().data.some((s: { id: string }) => s.id === sid(second)));
    const revoked = await a.request({ method: 'DELETE', url: `/v1/auth/sessions/${sid(second)}`, token: user.accessToken });
    assert.equal(revoked.statusCode, 204, revoked.body);
    assert.equal((await me(b, second)).statusCode, 401);
    assert.equal((await me(b, third)).statusCode, 200);

    const changed = await a.request({ method: 'POST', url: '/v1/auth/password', token: user.accessToken, payload: { current_password: user.password, new_password: 'another long password' } });
    assert.equal(changed.statusCode, 204, changed.body);
    assert.equal((await me(b, third)).statusCode, 401);
    assert.equal((await me(b, user.accessToken)).statusCode, 200, 'the session that changed it stays open');
  });

  it('a changed name is what the next request sees', async () => {
    const user = await signUp(a);
    assert.equal((await me(b, user.accessToken)).statusCode, 200);
    const patched = await a.request({ method: 'PATCH', url: '/v1/auth/me', token: user.accessToken, payload: { name: 'Renamed' } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(b.platform.gate.cache.session(JSON.parse(Buffer.from(user.accessToken.split('.')[1], 'base64url').toString()).sid), undefined);
  });

  it('a removed member loses the workspace at once; a downgraded one loses the scope at once', async () => {
    const owner = await signUp(a);
    const removed = await addMember(a, owner, 'admin');
    const downgraded = await addMember(a, owner, 'admin');
    const auditLog = (t: TestApp, user: TestUser) => t.request({ method: 'GET', url: '/v1/audit-log', token: user.accessToken, workspaceId: owner.workspaceId });
    assert.equal((await auditLog(b, removed)).statusCode, 200);
    assert.equal((await auditLog(b, downgraded)).statusCode, 200);

    const gone = await a.request({ method: 'DELETE', url: `/v1/workspaces/${owner.workspaceId}/members/${removed.id}`, token: owner.accessToken });
    assert.equal(gone.statusCode, 204, gone.body);
    assert.equal((await auditLog(b, removed)).statusCode, 404);
    assert.equal((await agents(b, removed.accessToken, owner.workspaceId)).statusCode, 404);

    const viewer = await a.request({ method: 'PATCH', url: `/v1/workspaces/${owner.workspaceId}/members/${downgraded.id}`, token: owner.accessToken, payload: { role: 'viewer' } });
    assert.equal(viewer.statusCode, 200, viewer.body);
    const refused = await auditLog(b, downgraded);
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(refused.json().code, 'insufficient_scope');
  });

  it('a deleted workspace takes its keys and memberships with it at once', async () => {
    const owner = await signUp(a);
    const created = await a.request({ method: 'POST', url: '/v1/workspaces', token: owner.accessToken, payload: { name: 'doomed' } });
    assert.equal(created.statusCode, 201, created.body);
    const doomed = created.json().id as string;
    const key = await createApiKey(a, { ...owner, workspaceId: doomed }, 'read-only');
    assert.equal((await agents(b, key.key)).statusCode, 200);
    assert.equal((await agents(b, owner.accessToken, doomed)).statusCode, 200);

    const deleted = await a.request({ method: 'DELETE', url: `/v1/workspaces/${doomed}`, token: owner.accessToken });
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.equal((await agents(b, key.key)).statusCode, 401);
    assert.equal((await agents(b, owner.accessToken, doomed)).statusCode, 404);
    assert.equal((await agents(b, owner.accessToken)).statusCode, 200, 'the personal workspace is untouched');
  });
});

describe('the gate cache safety net', () => {
  it('a change made behind the services is seen once AUTH_CACHE_TTL_SECONDS has passed (injected clock)', async (t) => {
    const clock = manualClock(new Date());
    const app = await buildTestApp({ t, clock, env: { AUTH_CACHE_TTL_SECONDS: '30' } });
    const owner = await signUp(app);
    const key = await createApiKey(app, owner, 'write');
    const agents = () => app.request({ method: 'GET', url: '/v1/agents', token: key.key });
    assert.equal((await agents()).statusCode, 200);
    // Revoked straight in the database: no service tells the gate.
    await sql`update api_keys set revoked_at = now() where id = ${key.id}`.execute(app.platform.db);
    clock.advance(29_000);
    assert.equal((await agents()).statusCode, 200, 'still the cached verdict');
    clock.advance(1_000);
    assert.equal((await agents()).statusCode, 401, 'the entry expired and the key was read again');
  });

  it('AUTH_CACHE_TTL_SECONDS=0 reads every credential from the database', async (t) => {
    const app = await buildTestApp({ t, env: { AUTH_CACHE_TTL_SECONDS: '0' } });
    const owner = await signUp(app);
    const key = await createApiKey(app, owner, 'write');
    assert.equal((await app.request({ method: 'GET', url: '/v1/agents', token: key.key })).statusCode, 200);
    await sql`update api_keys set revoked_at = now() where id = ${key.id}`.execute(app.platform.db);
    assert.equal((await app.request({ method: 'GET', url: '/v1/agents', token: key.key })).statusCode, 401);
  });
});

/** Waits (bounded) until `condition` holds. */
async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the gate cache and its LISTEN connection', { skip: !usingPostgres() && 'PostgreSQL only (TEST_DATABASE_URL)' }, () => {
  it('forgets everything when the connection drops, serves nothing until it listens again, then caches again', async (t) => {
    const database = await otherHandle();
    const app = await buildTestApp({ t, database });
    const owner = await signUp(app);
    const key = await createApiKey(app, owner, 'write');
    const hash = sha256Hex(key.key);
    const agents = () => app.request({ method: 'GET', url: '/v1/agents', token: key.key });
    assert.equal((await agents()).statusCode, 200);
    assert.ok(app.platform.gate.cache.key(hash));

    const channel = `auth_gate_${database.schema}`;
    const killed = await sql<{ pid: number }>`select pg_terminate_backend(pid) as ok, pid from pg_stat_activity where query = ${`LISTEN ${channel}`}`.execute(database.db);
    assert.ok(killed.rows.length >= 1);
    await until(() => !app.platform.gate.serving, 'the loss is noticed');
    assert.equal(app.platform.gate.cache.size, 0, 'nothing kept from before the loss');
    await until(() => app.platform.gate.serving, 'listening again');
    assert.equal((await agents()).statusCode, 200);
    assert.ok(app.platform.gate.cache.key(hash), 'cached again');
  });
});
