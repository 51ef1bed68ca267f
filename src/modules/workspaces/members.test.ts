import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { createApiKey, signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { encodeCursor } from '../../platform/pagination.ts';
import { addMember } from '../invitations/testing.ts';

const MEMBER_FIELDS = ['email', 'joined_at', 'name', 'role', 'user_id'];

describe('workspace members', async () => {
  const t = await buildTestApp();
  const db = t.platform.db;
  const roleOf = async (workspaceId: string, userId: string) =>
    (await db.selectFrom('memberships').select('role').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst())?.role;
  const patchRole = (caller: TestUser, workspaceId: string, userId: string, role: string) =>
    t.request({ method: 'PATCH', url: `/v1/workspaces/${workspaceId}/members/${userId}`, token: caller.accessToken, payload: { role } });
  const remove = (caller: TestUser, workspaceId: string, userId: string) =>
    t.request({ method: 'DELETE', url: `/v1/workspaces/${workspaceId}/members/${userId}`, token: caller.accessToken });

  it('lists members with email, name, role and join time, newest first, page by page', async () => {
    const owner = await signUp(t, { name: 'Olive Owner' });
    const admin = await addMember(t, owner, 'admin');
    const viewer = await addMember(t, owner, 'viewer');

    // Any member may see who else is in the workspace, a viewer included.
    const res = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}/members`, token: viewer.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.has_more, false);
    assert.equal(body.next_cursor, null);
    assert.deepEqual(
      body.data.map((m: { user_id: string; email: string; role: string }) => [m.user_id, m.email, m.role]),
      [
        [viewer.id, viewer.email, 'viewer'],
        [admin.id, admin.email, 'admin'],
        [owner.id, owner.email, 'owner'],
      ],
    );
    assert.deepEqual(Object.keys(body.data[0]).sort(), MEMBER_FIELDS);
    const ownerRow = await db.selectFrom('memberships').select('created_at').where('workspace_id', '=', owner.workspaceId).where('user_id', '=', owner.id).executeTakeFirstOrThrow();
    assert.equal(body.data[2].joined_at, new Date(ownerRow.created_at).toISOString());
    assert.equal(body.data[2].name, 'Olive Owner');

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/v1/workspaces/${owner.workspaceId}/members?limit=1${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await t.request({ method: 'GET', url, token: owner.accessToken });
      assert.equal(page.statusCode, 200, page.body);
      const pageBody = page.json();
      assert.equal(pageBody.data.length, 1);
      seen.push(pageBody.data[0].user_id);
      cursor = pageBody.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [viewer.id, admin.id, owner.id]);

    const key = await createApiKey(t, owner, 'read-only');
    const asKey = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}/members`, token: key.key });
    assert.equal(asKey.statusCode, 200, asKey.body);
    assert.equal(asKey.json().data.length, 3);
  });

  it('refuses a bad member-list query with 422 naming the parameter', async () => {
    const owner = await signUp(t);
    for (const [query, expected] of [
      ['limit=0', 'query.limit'],
      ['limit=1000', 'query.limit'],
      [`cursor=${encodeCursor('no-separator')}`, 'query.cursor'],
      ['cursor=garbage', 'query.cursor'],
    ]) {
      const res = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}/members?${query}`, token: owner.accessToken });
      assert.equal(res.statusCode, 422, `${query}: ${res.body}`);
      assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), [expected], query);
    }
  });

  it("changes a member's role and reads it back; the new role is the member's scope at once", async () => {
    const owner = await signUp(t);
    const member = await addMember(t, owner, 'member');
    const res = await patchRole(owner, owner.workspaceId, member.id, 'admin');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(Object.keys(res.json()).sort(), MEMBER_FIELDS);
    assert.equal(res.json().user_id, member.id);
    assert.equal(res.json().role, 'admin');
    assert.equal(await roleOf(owner.workspaceId, member.id), 'admin');
    const rename = await t.request({ method: 'PATCH', url: `/v1/workspaces/${owner.workspaceId}`, token: member.accessToken, payload: { name: 'By the new admin' } });
    assert.equal(rename.statusCode, 200, rename.body);

    const audit = await db.selectFrom('audit_log').selectAll().where('workspace_id', '=', owner.workspaceId).where('action', '=', 'workspaces.members.update').execute();
    assert.deepEqual(audit.map((a) => [a.actor_id, a.resource_id, a.status_code]), [[owner.id, member.id, 200]]);
  });

  it('refuses an invalid role change with 422 naming the field', async () => {
    const owner = await signUp(t);
    const member = await addMember(t, owner, 'member');
    for (const [payload, expected] of [
      [{}, ['role']],
      [{ role: 'superuser' }, ['role']],
      [{ role: 'admin', email: 'x@example.com' }, ['email']],
    ] as Array<[object, string[]]>) {
      const res = await t.request({ method: 'PATCH', url: `/v1/workspaces/${owner.workspaceId}/members/${member.id}`, token: owner.accessToken, payload });
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), expected);
    }
    assert.equal(await roleOf(owner.workspaceId, member.id), 'member');
  });

  it('only an owner grants or changes the owner role', async () => {
    const owner = await signUp(t);
    const admin = await addMember(t, owner, 'admin');
    const member = await addMember(t, owner, 'member');

    const grant = await patchRole(admin, owner.workspaceId, member.id, 'owner');
    assert.equal(grant.statusCode, 403, grant.body);
    assert.equal(grant.json().code, 'forbidden');
    assert.equal(await roleOf(owner.workspaceId, member.id), 'member');
    const selfPromote = await patchRole(admin, owner.workspaceId, admin.id, 'owner');
    assert.equal(selfPromote.statusCode, 403, selfPromote.body);
    const demoteOwner = await patchRole(admin, owner.workspaceId, owner.id, 'member');
    assert.equal(demoteOwner.statusCode, 403, demoteOwner.body);
    assert.equal(demoteOwner.json().code, 'forbidden');
    assert.equal(await roleOf(owner.workspaceId, owner.id), 'owner');

    // An admin manages the other roles.
    const toViewer = await patchRole(admin, owner.workspaceId, member.id, 'viewer');
    assert.equal(toViewer.statusCode, 200, toViewer.body);
    assert.equal(await roleOf(owner.workspaceId, member.id), 'viewer');

    const byOwner = await patchRole(owner, owner.workspaceId, admin.id, 'owner');
    assert.equal(byOwner.statusCode, 200, byOwner.body);
    assert.equal(await roleOf(owner.workspaceId, admin.id), 'owner');
  });

  it('members and viewers cannot change roles (403 insufficient_scope)', async () => {
    const owner = await signUp(t);
    const member = await addMember(t, owner, 'member');
    const viewer = await addMember(t, owner, 'viewer');
    for (const caller of [member, viewer]) {
      const res = await patchRole(caller, owner.workspaceId, caller.id, 'admin');
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().code, 'insufficient_scope');
    }
    assert.equal(await roleOf(owner.workspaceId, member.id), 'member');
    assert.equal(await roleOf(owner.workspaceId, viewer.id), 'viewer');
  });

  it('the last owner cannot be demoted or removed (409); with a second owner they can', async () => {
    const owner = await signUp(t);
    const demote = await patchRole(owner, owner.workspaceId, owner.id, 'admin');
    assert.equal(demote.statusCode, 409, demote.body);
    assert.equal(demote.json().code, 'conflict');
    const leave = await remove(owner, owner.workspaceId, owner.id);
    assert.equal(leave.statusCode, 409, leave.body);
    assert.equal(leave.json().code, 'conflict');
    assert.equal(await roleOf(owner.workspaceId, owner.id), 'owner');

    const second = await addMember(t, owner, 'owner');
    const nowDemote = await patchRole(owner, owner.workspaceId, owner.id, 'admin');
    assert.equal(nowDemote.statusCode, 200, nowDemote.body);
    assert.equal(await roleOf(owner.workspaceId, owner.id), 'admin');
    // `second` is the last owner now.
    const lastDemote = await patchRole(second, owner.workspaceId, second.id, 'member');
    assert.equal(lastDemote.statusCode, 409, lastDemote.body);
    const removeLast = await remove(owner, owner.workspaceId, second.id);
    assert.equal(removeLast.statusCode, 403, 'an admin never removes an owner');
    assert.equal(await roleOf(owner.workspaceId, second.id), 'owner');
  });

  it('an owner removes another owner; an admin removes a member, who then loses access', async () => {
    const owner = await signUp(t);
    const coOwner = await addMember(t, owner, 'owner');
    const admin = await addMember(t, owner, 'admin');
    const member = await addMember(t, owner, 'member');

    const byAdmin = await remove(admin, owner.workspaceId, member.id);
    assert.equal(byAdmin.statusCode, 204, byAdmin.body);
    assert.equal(await roleOf(owner.workspaceId, member.id), undefined);
    const lockedOut = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}`, token: member.accessToken });
    assert.equal(lockedOut.statusCode, 404, lockedOut.body);
    const audit = await db.selectFrom('audit_log').selectAll().where('workspace_id', '=', owner.workspaceId).where('action', '=', 'workspaces.members.delete').execute();
    assert.deepEqual(audit.map((a) => [a.actor_id, a.resource_id, a.status_code]), [[admin.id, member.id, 204]]);

    const adminOnOwner = await remove(admin, owner.workspaceId, coOwner.id);
    assert.equal(adminOnOwner.statusCode, 403, adminOnOwner.body);
    assert.equal(adminOnOwner.json().code, 'forbidden');
    const ownerOnOwner = await remove(owner, owner.workspaceId, coOwner.id);
    assert.equal(ownerOnOwner.statusCode, 204, ownerOnOwner.body);
    assert.equal(await roleOf(owner.workspaceId, coOwner.id), undefined);

    const again = await remove(owner, owner.workspaceId, member.id);
    assert.equal(again.statusCode, 404, again.body);
    assert.equal(again.json().code, 'not_found');
  });

  it('any member may leave, but a member or viewer cannot remove someone else', async () => {
    const owner = await signUp(t);
    const member = await addMember(t, owner, 'member');
    const viewer = await addMember(t, owner, 'viewer');
    for (const [caller, target] of [
      [viewer, member],
      [member, viewer],
      [member, owner],
    ]) {
      const res = await remove(caller, owner.workspaceId, target.id);
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().code, 'insufficient_scope');
      assert.notEqual(await roleOf(owner.workspaceId, target.id), undefined);
    }
    const leave = await remove(viewer, owner.workspaceId, viewer.id);
    assert.equal(leave.statusCode, 204, leave.body);
    assert.equal(await roleOf(owner.workspaceId, viewer.id), undefined);
    const list = await t.request({ method: 'GET', url: '/v1/workspaces', token: viewer.accessToken });
    assert.deepEqual(list.json().data.map((w: { id: string }) => w.id), [viewer.workspaceId], 'only their own workspace is left');
  });

  it('a user of another workspace is not found in this one (404)', async () => {
    const owner = await signUp(t);
    const stranger = await signUp(t);
    const patch = await patchRole(owner, owner.workspaceId, stranger.id, 'viewer');
    assert.equal(patch.statusCode, 404, patch.body);
    assert.equal(patch.json().code, 'not_found');
    const del = await remove(owner, owner.workspaceId, stranger.id);
    assert.equal(del.statusCode, 404, del.body);
    assert.equal(await roleOf(stranger.workspaceId, stranger.id), 'owner', "the stranger's own membership is untouched");
  });
});

const shared: { app?: Promise<TestApp> } = {};
const getApp = () => {
  shared.app ??= buildTestApp();
  return shared.app;
};
const bearer = (user: TestUser) => ({ authorization: `Bearer ${user.accessToken}` });

securitySuite('workspace members', getApp, {
  'GET /v1/workspaces/{id}/members': {
    scope: 'read-only',
    ownedResource: true,
    prepare: async (_t, owner) => ({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}/members`, headers: bearer(owner) }),
  },
  'PATCH /v1/workspaces/{id}/members/{user_id}': {
    scope: 'admin',
    userOnly: true,
    ownedResource: true,
    prepare: async (t, owner) => {
      const member = await addMember(t, owner, 'member');
      return { method: 'PATCH', url: `/v1/workspaces/${owner.workspaceId}/members/${member.id}`, headers: bearer(owner), payload: { role: 'viewer' } };
    },
  },
  'DELETE /v1/workspaces/{id}/members/{user_id}': {
    scope: 'admin',
    auth: 'user',
    userOnly: true,
    ownedResource: true,
    prepare: async (t, owner) => {
      const member = await addMember(t, owner, 'member');
      return { method: 'DELETE', url: `/v1/workspaces/${owner.workspaceId}/members/${member.id}`, headers: bearer(owner) };
    },
  },
});
