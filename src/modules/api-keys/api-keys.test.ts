import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isWellFormedApiKey } from '../../platform/auth/api-key-format.ts';
import { sha256Hex } from '../../platform/secrets.ts';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { createApiKey, signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';

const LISTED_FIELDS = ['created_at', 'id', 'last4', 'last_used_at', 'last_used_ip', 'name', 'prefix', 'revoked_at', 'scope'];

describe('API keys', async () => {
  const t = await buildTestApp();
  const as = (user: TestUser) => ({ token: user.accessToken, workspaceId: user.workspaceId });

  it('creates a key shown once, stores only its SHA-256 and names its creator', async () => {
    const owner = await signUp(t);
    const res = await t.request({ method: 'POST', url: '/v1/api-keys', ...as(owner), payload: { name: 'Production backend', scope: 'write' } });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), [...LISTED_FIELDS, 'key'].sort());
    assert.match(body.id, /^key_[0-9a-z]{26}$/);
    assert.match(body.key, /^sk_[0-9A-Za-z]{46}$/);
    assert.ok(isWellFormedApiKey(body.key), 'the key carries a valid checksum');
    assert.equal(body.name, 'Production backend');
    assert.equal(body.scope, 'write');
    assert.equal(body.prefix, body.key.slice(0, 7));
    assert.equal(body.last4, body.key.slice(-4));
    assert.equal(body.last_used_at, null);
    assert.equal(body.last_used_ip, null);
    assert.equal(body.revoked_at, null);
    assert.ok(!Number.isNaN(Date.parse(body.created_at)));

    const row = await t.platform.db.selectFrom('api_keys').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(row.key_hash, sha256Hex(body.key));
    assert.equal(row.workspace_id, owner.workspaceId);
    assert.equal(row.created_by, owner.id);
    assert.ok(!Object.values(row).some((value) => typeof value === 'string' && value.includes(body.key)), 'the key itself is not stored');

    const read = await t.request({ method: 'GET', url: `/v1/api-keys/${body.id}`, ...as(owner) });
    assert.equal(read.statusCode, 200, read.body);
    const { key: _shownOnce, ...listed } = body;
    assert.deepEqual(read.json(), listed);
  });

  it('a created key authenticates as its workspace with its scope', async () => {
    const owner = await signUp(t);
    const key = await createApiKey(t, owner, 'admin');
    const res = await t.request({ method: 'GET', url: '/v1/audit-log', token: key.key });
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(res.json().data.some((row: { action: string; resource_id: string }) => row.action === 'api_keys.create' && row.resource_id === key.id));
  });

  it('refuses an invalid body with 422 naming the field', async () => {
    const owner = await signUp(t);
    const cases: Array<[unknown, string]> = [
      [{ name: 'x' }, 'scope'],
      [{ name: 'x', scope: 'superuser' }, 'scope'],
      [{ name: '', scope: 'write' }, 'name'],
      [{ scope: 'write' }, 'name'],
      [{ name: 'x', scope: 'write', expires_at: '2030-01-01T00:00:00Z' }, 'expires_at'],
    ];
    for (const [payload, path] of cases) {
      const res = await t.request({ method: 'POST', url: '/v1/api-keys', ...as(owner), payload: payload as object });
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      assert.equal(res.json().code, 'validation_failed');
      assert.ok(res.json().errors.some((e: { path: string }) => e.path === path), `${JSON.stringify(payload)} names ${path}: ${res.body}`);
    }
    const count = await t.platform.db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', owner.workspaceId).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
  });

  it("lists only the current workspace's keys, newest first, paginated, never the key or its hash", async () => {
    const owner = await signUp(t);
    const other = await signUp(t);
    const first = await createApiKey(t, owner, 'read-only', 'first');
    const second = await createApiKey(t, owner, 'write', 'second');
    const third = await createApiKey(t, owner, 'admin', 'third');
    await createApiKey(t, other, 'admin', 'someone else');

    const all = await t.request({ method: 'GET', url: '/v1/api-keys', ...as(owner) });
    assert.equal(all.statusCode, 200, all.body);
    assert.deepEqual(all.json().data.map((k: { id: string }) => k.id), [third.id, second.id, first.id]);
    assert.equal(all.json().has_more, false);
    assert.equal(all.json().next_cursor, null);
    for (const item of all.json().data) assert.deepEqual(Object.keys(item).sort(), LISTED_FIELDS);
    for (const secret of [first.key, second.key, third.key, sha256Hex(first.key)]) assert.ok(!all.body.includes(secret));

    const page1 = await t.request({ method: 'GET', url: '/v1/api-keys?limit=2', ...as(owner) });
    assert.deepEqual(page1.json().data.map((k: { id: string }) => k.id), [third.id, second.id]);
    assert.equal(page1.json().has_more, true);
    const page2 = await t.request({ method: 'GET', url: `/v1/api-keys?limit=2&cursor=${page1.json().next_cursor}`, ...as(owner) });
    assert.deepEqual(page2.json().data.map((k: { id: string }) => k.id), [first.id]);
    assert.equal(page2.json().has_more, false);

    const tooMany = await t.request({ method: 'GET', url: '/v1/api-keys?limit=101', ...as(owner) });
    assert.equal(tooMany.statusCode, 422);
    assert.equal(tooMany.json().errors[0].path, 'query.limit');
  });

  it('renames a key; its scope cannot be changed', async () => {
    const owner = await signUp(t);
    const key = await createApiKey(t, owner, 'read-only', 'old name');
    const renamed = await t.request({ method: 'PATCH', url: `/v1/api-keys/${key.id}`, ...as(owner), payload: { name: 'new name' } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json().name, 'new name');
    assert.equal(renamed.json().scope, 'read-only');
    assert.equal(renamed.json().key, undefined);
    const read = await t.request({ method: 'GET', url: `/v1/api-keys/${key.id}`, ...as(owner) });
    assert.equal(read.json().name, 'new name');

    const rescoped = await t.request({ method: 'PATCH', url: `/v1/api-keys/${key.id}`, ...as(owner), payload: { name: 'x', scope: 'admin' } });
    assert.equal(rescoped.statusCode, 422, rescoped.body);
    assert.deepEqual(rescoped.json().errors, [{ path: 'scope', message: 'is not a known field' }]);
    const row = await t.platform.db.selectFrom('api_keys').select(['scope', 'name']).where('id', '=', key.id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { scope: 'read-only', name: 'new name' });

    const denied = await t.request({ method: 'POST', url: '/v1/api-keys', token: key.key, payload: { name: 'x', scope: 'write' } });
    assert.equal(denied.statusCode, 403, 'the key still acts with its original scope');
  });

  it('revokes at once: the next request with the key is 401; revoking again keeps the first time', async () => {
    const owner = await signUp(t);
    const key = await createApiKey(t, owner, 'admin');
    const before = await t.request({ method: 'GET', url: '/v1/audit-log', token: key.key });
    assert.equal(before.statusCode, 200, before.body);

    const revoke = await t.request({ method: 'DELETE', url: `/v1/api-keys/${key.id}`, ...as(owner) });
    assert.equal(revoke.statusCode, 204, revoke.body);
    assert.equal(revoke.body, '');

    const after = await t.request({ method: 'GET', url: '/v1/audit-log', token: key.key });
    assert.equal(after.statusCode, 401, after.body);
    assert.equal(after.json().code, 'unauthorized');

    const read = await t.request({ method: 'GET', url: `/v1/api-keys/${key.id}`, ...as(owner) });
    const revokedAt = read.json().revoked_at;
    assert.ok(revokedAt && !Number.isNaN(Date.parse(revokedAt)), 'revoked_at is set');
    const listed = await t.request({ method: 'GET', url: '/v1/api-keys', ...as(owner) });
    assert.equal(listed.json().data.find((k: { id: string }) => k.id === key.id)?.revoked_at, revokedAt, 'revoked keys stay listed');

    const again = await t.request({ method: 'DELETE', url: `/v1/api-keys/${key.id}`, ...as(owner) });
    assert.equal(again.statusCode, 204);
    const reread = await t.request({ method: 'GET', url: `/v1/api-keys/${key.id}`, ...as(owner) });
    assert.equal(reread.json().revoked_at, revokedAt);
  });

  it('only owners and admins of the workspace manage its keys', async () => {
    const owner = await signUp(t);
    const roles = ['admin', 'member', 'viewer'] as const;
    const people = await Promise.all(roles.map(() => signUp(t)));
    // Memberships written directly: this test is about the key routes, not about invitations.
    for (const [i, role] of roles.entries()) {
      await t.platform.db.insertInto('memberships').values({ workspace_id: owner.workspaceId, user_id: people[i].id, role, created_at: new Date(), updated_at: new Date() }).execute();
    }
    const [admin, member, viewer] = people.map((p) => ({ token: p.accessToken, workspaceId: owner.workspaceId }));
    const made = await t.request({ method: 'POST', url: '/v1/api-keys', ...admin, payload: { name: 'by admin', scope: 'admin' } });
    assert.equal(made.statusCode, 201, made.body);
    for (const caller of [member, viewer]) {
      for (const request of [
        { method: 'POST' as const, url: '/v1/api-keys', payload: { name: 'x', scope: 'read-only' } },
        { method: 'GET' as const, url: '/v1/api-keys' },
        { method: 'DELETE' as const, url: `/v1/api-keys/${made.json().id}` },
      ]) {
        const res = await t.request({ ...request, ...caller });
        assert.equal(res.statusCode, 403, `${request.method}: ${res.body}`);
        assert.equal(res.json().code, 'insufficient_scope');
      }
    }
    const listed = await t.request({ method: 'GET', url: '/v1/api-keys', ...as(owner) });
    assert.deepEqual(listed.json().data.map((k: { name: string; revoked_at: string | null }) => [k.name, k.revoked_at]), [['by admin', null]]);
  });

  it('answers 404 for an unknown key id and for a key of another workspace', async () => {
    const owner = await signUp(t);
    const stranger = await signUp(t);
    const theirs = await createApiKey(t, stranger, 'admin');
    for (const id of ['key_00000000000000000000000000', theirs.id]) {
      for (const request of [
        { method: 'GET' as const, url: `/v1/api-keys/${id}` },
        { method: 'PATCH' as const, url: `/v1/api-keys/${id}`, payload: { name: 'mine now' } },
        { method: 'DELETE' as const, url: `/v1/api-keys/${id}` },
      ]) {
        const res = await t.request({ ...request, ...as(owner) });
        assert.equal(res.statusCode, 404, `${request.method} ${id}: ${res.body}`);
        assert.equal(res.json().code, 'not_found');
      }
    }
    const row = await t.platform.db.selectFrom('api_keys').select(['name', 'revoked_at']).where('id', '=', theirs.id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { name: 'admin key', revoked_at: null }, "the other workspace's key is untouched");
  });
});

const shared: { app?: Promise<TestApp> } = {};
const getApp = () => {
  shared.app ??= buildTestApp();
  return shared.app;
};

securitySuite('api keys', getApp, {
  'POST /v1/api-keys': {
    scope: 'admin',
    userOnly: true,
    prepare: async (_t, owner) => ({ method: 'POST', url: '/v1/api-keys', headers: { authorization: `Bearer ${owner.accessToken}` }, payload: { name: 'k', scope: 'write' } }),
  },
  'GET /v1/api-keys': {
    scope: 'admin',
    userOnly: true,
    prepare: async (_t, owner) => ({ method: 'GET', url: '/v1/api-keys', headers: { authorization: `Bearer ${owner.accessToken}` } }),
  },
  'GET /v1/api-keys/{id}': {
    scope: 'admin',
    userOnly: true,
    ownedResource: true,
    prepare: async (t, owner) => {
      const key = await createApiKey(t, owner, 'write');
      return { method: 'GET', url: `/v1/api-keys/${key.id}`, headers: { authorization: `Bearer ${owner.accessToken}` } };
    },
  },
  'PATCH /v1/api-keys/{id}': {
    scope: 'admin',
    userOnly: true,
    ownedResource: true,
    prepare: async (t, owner) => {
      const key = await createApiKey(t, owner, 'write');
      return { method: 'PATCH', url: `/v1/api-keys/${key.id}`, headers: { authorization: `Bearer ${owner.accessToken}` }, payload: { name: 'renamed' } };
    },
  },
  'DELETE /v1/api-keys/{id}': {
    scope: 'admin',
    userOnly: true,
    ownedResource: true,
    prepare: async (t, owner) => {
      const key = await createApiKey(t, owner, 'write');
      return { method: 'DELETE', url: `/v1/api-keys/${key.id}`, headers: { authorization: `Bearer ${owner.accessToken}` } };
    },
  },
});
