import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { createApiKey, signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { addMember, invitationMail } from '../invitations/testing.ts';

const WORKSPACE_FIELDS = ['created_at', 'id', 'name', 'role', 'settings', 'updated_at'];

async function createWorkspace(t: TestApp, user: TestUser, name: string) {
  const res = await t.request({ method: 'POST', url: '/v1/workspaces', token: user.accessToken, payload: { name } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; name: string; role: string };
}

function paths(res: { json(): { code: string; errors?: Array<{ path: string }> } }) {
  const body = res.json();
  assert.equal(body.code, 'validation_failed');
  return (body.errors ?? []).map((e) => e.path).sort();
}

describe('workspaces', async () => {
  const t = await buildTestApp();

  it('creates a workspace owned by the caller with an empty wallet and an audit row in it', async () => {
    const user = await signUp(t);
    const res = await t.request({ method: 'POST', url: '/v1/workspaces', token: user.accessToken, payload: { name: '  Acme support ' } });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), WORKSPACE_FIELDS);
    assert.match(body.id, /^ws_[0-9a-z]{26}$/);
    assert.equal(body.name, 'Acme support');
    assert.equal(body.role, 'owner');

    const db = t.platform.db;
    const row = await db.selectFrom('workspaces').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(row.name, 'Acme support');
    assert.equal(row.created_by, user.id);
    const members = await db.selectFrom('memberships').select(['user_id', 'role']).where('workspace_id', '=', body.id).execute();
    assert.deepEqual(members, [{ user_id: user.id, role: 'owner' }]);
    const wallet = await db.selectFrom('wallets').selectAll().where('workspace_id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(Number(wallet.balance_micros), 0);
    const ledger = await db.selectFrom('wallet_transactions').select('id').where('workspace_id', '=', body.id).execute();
    assert.equal(ledger.length, 0, 'no signup credit for an extra workspace');
    const audit = await db.selectFrom('audit_log').selectAll().where('workspace_id', '=', body.id).execute();
    assert.deepEqual(
      audit.map((a) => [a.action, a.actor_id, a.resource_id, a.status_code]),
      [['workspaces.create', user.id, body.id, 201]],
    );
  });

  it('refuses an invalid workspace body with 422 naming the field', async () => {
    const user = await signUp(t);
    const cases: Array<[unknown, string[]]> = [
      [{}, ['name']],
      [{ name: '' }, ['name']],
      [{ name: '   ' }, ['name']],
      [{ name: 'x'.repeat(201) }, ['name']],
      [{ name: 42 }, ['name']],
      [{ name: 'ok', plan: 'pro' }, ['plan']],
    ];
    for (const [payload, expected] of cases) {
      const res = await t.request({ method: 'POST', url: '/v1/workspaces', token: user.accessToken, payload: payload as object });
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      assert.deepEqual(paths(res), expected, JSON.stringify(payload));
    }
    const count = await t.platform.db.selectFrom('memberships').select('workspace_id').where('user_id', '=', user.id).execute();
    assert.equal(count.length, 1, 'nothing was created');
  });

  it("lists the caller's workspaces with their role, newest first, page by page", async () => {
    const owner = await signUp(t);
    const second = await createWorkspace(t, owner, 'Second');
    const other = await signUp(t);
    // The owner joins another user's workspace as a viewer.
    const invited = await t.request({
      method: 'POST',
      url: `/v1/workspaces/${other.workspaceId}/members`,
      token: other.accessToken,
      payload: { email: owner.email, role: 'viewer' },
    });
    assert.equal(invited.statusCode, 201, invited.body);
    const token = invitationMail(t, invited.json().id).meta.token;
    const accepted = await t.request({ method: 'POST', url: `/v1/invitations/${token}/accept`, token: owner.accessToken });
    assert.equal(accepted.statusCode, 200, accepted.body);

    const all = await t.request({ method: 'GET', url: '/v1/workspaces', token: owner.accessToken });
    assert.equal(all.statusCode, 200, all.body);
    const body = all.json();
    assert.equal(body.has_more, false);
    assert.equal(body.next_cursor, null);
    const expectedIds = [second.id, other.workspaceId, owner.workspaceId].sort().reverse();
    assert.deepEqual(body.data.map((w: { id: string }) => w.id), expectedIds, 'newest first');
    const roles = Object.fromEntries(body.data.map((w: { id: string; role: string }) => [w.id, w.role]));
    assert.deepEqual(roles, { [owner.workspaceId]: 'owner', [second.id]: 'owner', [other.workspaceId]: 'viewer' });
    assert.deepEqual(Object.keys(body.data[0]).sort(), WORKSPACE_FIELDS);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/v1/workspaces?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await t.request({ method: 'GET', url, token: owner.accessToken });
      assert.equal(page.statusCode, 200, page.body);
      const pageBody = page.json();
      assert.ok(pageBody.data.length <= 2);
      seen.push(...pageBody.data.map((w: { id: string }) => w.id));
      assert.equal(pageBody.has_more, pageBody.next_cursor !== null);
      cursor = pageBody.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, expectedIds, 'the pages together are the whole list, in order, without repeats');

    const strangers = await t.request({ method: 'GET', url: '/v1/workspaces', token: (await signUp(t)).accessToken });
    assert.ok(!strangers.json().data.some((w: { id: string }) => expectedIds.includes(w.id)), "another user never sees these workspaces");
  });

  it('refuses a bad list query with 422 naming the parameter', async () => {
    const user = await signUp(t);
    for (const [query, expected] of [
      ['limit=0', 'query.limit'],
      ['limit=101', 'query.limit'],
      ['limit=abc', 'query.limit'],
      ['cursor=not-a-cursor', 'query.cursor'],
    ]) {
      const res = await t.request({ method: 'GET', url: `/v1/workspaces?${query}`, token: user.accessToken });
      assert.equal(res.statusCode, 422, `${query}: ${res.body}`);
      assert.deepEqual(paths(res), [expected], query);
    }
  });

  it('gets a workspace with the caller\'s role (null for an API key)', async () => {
    const owner = await signUp(t);
    const res = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}`, token: owner.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    const row = await t.platform.db.selectFrom('workspaces').selectAll().where('id', '=', owner.workspaceId).executeTakeFirstOrThrow();
    assert.deepEqual(res.json(), {
      id: owner.workspaceId,
      name: row.name,
      role: 'owner',
      settings: { max_concurrent_calls: 10 },
      created_at: new Date(row.created_at).toISOString(),
      updated_at: new Date(row.updated_at).toISOString(),
    });
    const key = await createApiKey(t, owner, 'read-only');
    const asKey = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}`, token: key.key });
    assert.equal(asKey.statusCode, 200, asKey.body);
    assert.equal(asKey.json().role, null);
    assert.equal(asKey.json().id, owner.workspaceId);

    const viewer = await addMember(t, owner, 'viewer');
    const asViewer = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}`, token: viewer.accessToken });
    assert.equal(asViewer.statusCode, 200, asViewer.body);
    assert.equal(asViewer.json().role, 'viewer');
  });

  it('renames a workspace (admin) and reads it back; a member may not', async () => {
    const owner = await signUp(t);
    const admin = await addMember(t, owner, 'admin');
    const member = await addMember(t, owner, 'member');
    const res = await t.request({ method: 'PATCH', url: `/v1/workspaces/${owner.workspaceId}`, token: admin.accessToken, payload: { name: 'Renamed' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().name, 'Renamed');
    assert.equal(res.json().role, 'admin');
    const row = await t.platform.db.selectFrom('workspaces').selectAll().where('id', '=', owner.workspaceId).executeTakeFirstOrThrow();
    assert.equal(row.name, 'Renamed');
    assert.equal(new Date(row.updated_at).toISOString(), res.json().updated_at);

    const denied = await t.request({ method: 'PATCH', url: `/v1/workspaces/${owner.workspaceId}`, token: member.accessToken, payload: { name: 'Nope' } });
    assert.equal(denied.statusCode, 403, denied.body);
    assert.equal(denied.json().code, 'insufficient_scope');
    const after = await t.platform.db.selectFrom('workspaces').select('name').where('id', '=', owner.workspaceId).executeTakeFirstOrThrow();
    assert.equal(after.name, 'Renamed');

    for (const [payload, expected] of [
      [{}, ['body']],
      [{ name: '' }, ['name']],
      [{ name: 'ok', id: 'ws_x' }, ['id']],
    ] as Array<[object, string[]]>) {
      const bad = await t.request({ method: 'PATCH', url: `/v1/workspaces/${owner.workspaceId}`, token: owner.accessToken, payload });
      assert.equal(bad.statusCode, 422, `${JSON.stringify(payload)}: ${bad.body}`);
      assert.deepEqual(paths(bad), expected);
    }
  });

  it('settings.max_concurrent_calls: the default for every member, set by owners and admins within 1..1000', async () => {
    const owner = await signUp(t);
    const admin = await addMember(t, owner, 'admin');
    const viewer = await addMember(t, owner, 'viewer');
    const url = `/v1/workspaces/${owner.workspaceId}`;
    const seen = await t.request({ method: 'GET', url, token: viewer.accessToken });
    assert.deepEqual(seen.json().settings, { max_concurrent_calls: 10 });
    const set = await t.request({ method: 'PATCH', url, token: admin.accessToken, payload: { settings: { max_concurrent_calls: 3 } } });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(set.json().settings, { max_concurrent_calls: 3 });
    assert.equal(set.json().name, seen.json().name, 'the name is unchanged');
    assert.deepEqual((await t.request({ method: 'GET', url, token: viewer.accessToken })).json().settings, { max_concurrent_calls: 3 });
    for (const value of [0, 1001, 2.5]) {
      const bad = await t.request({ method: 'PATCH', url, token: owner.accessToken, payload: { settings: { max_concurrent_calls: value } } });
      assert.equal(bad.statusCode, 422, bad.body);
      assert.deepEqual(paths(bad), ['settings.max_concurrent_calls']);
    }
    const member = await addMember(t, owner, 'member');
    assert.equal((await t.request({ method: 'PATCH', url, token: member.accessToken, payload: { settings: { max_concurrent_calls: 50 } } })).statusCode, 403);
    const row = await t.platform.db.selectFrom('workspaces').select('max_concurrent_calls').where('id', '=', owner.workspaceId).executeTakeFirstOrThrow();
    assert.equal(row.max_concurrent_calls, 3);
  });

  it('settings: shown by create and list, stored for the dialer, 404 from another workspace', async () => {
    const owner = await signUp(t);
    const extra = (await t.request({ method: 'POST', url: '/v1/workspaces', token: owner.accessToken, payload: { name: 'Extra' } })).json();
    assert.deepEqual(extra.settings, { max_concurrent_calls: 10 });
    const stored = async (id: string) => (await t.platform.db.selectFrom('workspaces').select('max_concurrent_calls').where('id', '=', id).executeTakeFirstOrThrow()).max_concurrent_calls;
    assert.equal(await stored(extra.id), null, 'unset: the dialer uses MAX_CONCURRENT_CALLS');
    const set = await t.request({ method: 'PATCH', url: `/v1/workspaces/${extra.id}`, token: owner.accessToken, payload: { settings: { max_concurrent_calls: 1000 } } });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(await stored(extra.id), 1000);
    assert.equal(await stored(owner.workspaceId), null, 'the other workspace keeps its default');
    const list = (await t.request({ method: 'GET', url: '/v1/workspaces', token: owner.accessToken })).json();
    const byId = Object.fromEntries(list.data.map((w: { id: string; settings: unknown }) => [w.id, w.settings]));
    assert.deepEqual(byId, { [extra.id]: { max_concurrent_calls: 1000 }, [owner.workspaceId]: { max_concurrent_calls: 10 } });

    const stranger = await signUp(t);
    for (const method of ['GET', 'PATCH'] as const) {
      const res = await t.request({ method, url: `/v1/workspaces/${extra.id}`, token: stranger.accessToken, payload: method === 'PATCH' ? { settings: { max_concurrent_calls: 1 } } : undefined });
      assert.equal(res.statusCode, 404, `${method}: ${res.body}`);
    }
    assert.equal(await stored(extra.id), 1000);
  });

  it('deletes a workspace with its members, invitations and wallet (owner only)', async () => {
    const owner = await signUp(t);
    const extra = await createWorkspace(t, owner, 'Short-lived');
    const member = await addMember(t, owner, 'member', extra.id);
    const pending = await t.request({ method: 'POST', url: `/v1/workspaces/${extra.id}/members`, token: owner.accessToken, payload: { email: 'later@example.com', role: 'viewer' } });
    assert.equal(pending.statusCode, 201, pending.body);

    const res = await t.request({ method: 'DELETE', url: `/v1/workspaces/${extra.id}`, token: owner.accessToken });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    const db = t.platform.db;
    assert.equal(await db.selectFrom('workspaces').select('id').where('id', '=', extra.id).executeTakeFirst(), undefined);
    assert.deepEqual(await db.selectFrom('memberships').select('user_id').where('workspace_id', '=', extra.id).execute(), []);
    assert.deepEqual(await db.selectFrom('invitations').select('id').where('workspace_id', '=', extra.id).execute(), []);
    assert.equal(await db.selectFrom('wallets').select('workspace_id').where('workspace_id', '=', extra.id).executeTakeFirst(), undefined);

    const gone = await t.request({ method: 'GET', url: `/v1/workspaces/${extra.id}`, token: member.accessToken });
    assert.equal(gone.statusCode, 404, gone.body);
    const stillThere = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}`, token: owner.accessToken });
    assert.equal(stillThere.statusCode, 200, 'the other workspace is untouched');
  });

  it('an admin cannot delete the workspace (403 forbidden)', async () => {
    const owner = await signUp(t);
    const admin = await addMember(t, owner, 'admin');
    const res = await t.request({ method: 'DELETE', url: `/v1/workspaces/${owner.workspaceId}`, token: admin.accessToken });
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(res.json().code, 'forbidden');
    assert.ok(await t.platform.db.selectFrom('workspaces').select('id').where('id', '=', owner.workspaceId).executeTakeFirst());
  });

  it("refuses to delete the caller's only workspace with 409", async () => {
    const owner = await signUp(t);
    const res = await t.request({ method: 'DELETE', url: `/v1/workspaces/${owner.workspaceId}`, token: owner.accessToken });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().code, 'conflict');
    assert.ok(await t.platform.db.selectFrom('workspaces').select('id').where('id', '=', owner.workspaceId).executeTakeFirst());
  });
});

const shared: { app?: Promise<TestApp> } = {};
const getApp = () => {
  shared.app ??= buildTestApp();
  return shared.app;
};
const bearer = (user: TestUser) => ({ authorization: `Bearer ${user.accessToken}` });

securitySuite('workspaces', getApp, {
  'GET /v1/workspaces': {
    scope: 'read-only',
    auth: 'user',
    prepare: async (_t, owner) => ({ method: 'GET', url: '/v1/workspaces', headers: bearer(owner) }),
  },
  'POST /v1/workspaces': {
    scope: 'read-only',
    auth: 'user',
    prepare: async (_t, owner) => ({ method: 'POST', url: '/v1/workspaces', headers: bearer(owner), payload: { name: 'Side project' } }),
  },
  'GET /v1/workspaces/{id}': {
    scope: 'read-only',
    ownedResource: true,
    prepare: async (_t, owner) => ({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}`, headers: bearer(owner) }),
  },
  'PATCH /v1/workspaces/{id}': {
    scope: 'admin',
    userOnly: true,
    ownedResource: true,
    prepare: async (_t, owner) => ({ method: 'PATCH', url: `/v1/workspaces/${owner.workspaceId}`, headers: bearer(owner), payload: { name: 'Renamed' } }),
  },
  'DELETE /v1/workspaces/{id}': {
    scope: 'admin',
    userOnly: true,
    ownedResource: true,
    prepare: async (t, owner) => {
      const extra = await createWorkspace(t, owner, 'To delete');
      return { method: 'DELETE', url: `/v1/workspaces/${extra.id}`, headers: bearer(owner) };
    },
  },
});
