import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { createApiKey, signUp, type TestUser, uniqueEmail } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { sha256Hex } from '../../platform/secrets.ts';
import { addMember, invitationMail, invite } from './testing.ts';

const INVITATION_FIELDS = ['created_at', 'email', 'expires_at', 'id', 'invited_by', 'role', 'status', 'workspace_id'];
const DAY_MS = 86_400_000;

describe('invitations', async () => {
  const t = await buildTestApp();
  const db = t.platform.db;
  const accept = (user: TestUser, token: string) => t.request({ method: 'POST', url: `/v1/invitations/${token}/accept`, token: user.accessToken });
  const listPending = (caller: TestUser, workspaceId: string, query = '') =>
    t.request({ method: 'GET', url: `/v1/workspaces/${workspaceId}/invitations${query}`, token: caller.accessToken });
  const invitationRow = (id: string) => db.selectFrom('invitations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('invites by email: 201 with the invitation, the token only in the mail, stored as its SHA-256', async () => {
    const owner = await signUp(t);
    const email = uniqueEmail('Invitee').replace('invitee', 'Invitee');
    const res = await invite(t, owner, owner.workspaceId, { email, role: 'member' });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), INVITATION_FIELDS);
    assert.match(body.id, /^inv_[0-9a-z]{26}$/);
    assert.equal(body.email, email.toLowerCase());
    assert.equal(body.role, 'member');
    assert.equal(body.status, 'pending');
    assert.equal(body.workspace_id, owner.workspaceId);
    assert.equal(body.invited_by, owner.id);
    assert.equal(Date.parse(body.expires_at) - Date.parse(body.created_at), 7 * DAY_MS);

    const mail = invitationMail(t, body.id);
    assert.equal(mail.to, email.toLowerCase());
    assert.equal(mail.meta.workspace_id, owner.workspaceId);
    assert.match(mail.meta.token, /^iv_[A-Za-z0-9_-]{43}$/);
    assert.equal(mail.meta.link, `http://localhost:3000/invitations/${mail.meta.token}`);
    assert.ok(mail.text.includes(mail.meta.link), 'the mail body carries the link');
    assert.ok(!res.body.includes(mail.meta.token), 'the response never carries the token');

    const row = await invitationRow(body.id);
    assert.equal(row.token_hash, sha256Hex(mail.meta.token));
    assert.ok(!res.body.includes(row.token_hash), 'nor its hash');
    assert.ok(!Object.values(row).some((v) => typeof v === 'string' && v.includes(mail.meta.token)), 'the token itself is not stored');
    assert.equal(row.email, email.toLowerCase());
    assert.equal(row.role, 'member');
    assert.equal(row.accepted_at, null);
    assert.equal(row.revoked_at, null);

    const audit = await db.selectFrom('audit_log').selectAll().where('workspace_id', '=', owner.workspaceId).where('method', '=', 'POST').where('route', '=', '/v1/workspaces/:id/members').execute();
    assert.deepEqual(audit.map((a) => [a.actor_id, a.resource_id, a.status_code]), [[owner.id, body.id, 201]], 'the audit row names the invitation');
  });

  it('refuses an invalid invitation body with 422 naming the field', async () => {
    const owner = await signUp(t);
    for (const [payload, expected] of [
      [{ role: 'member' }, ['email']],
      [{ email: 'not-an-email', role: 'member' }, ['email']],
      [{ email: 'a@example.com' }, ['role']],
      [{ email: 'a@example.com', role: 'superuser' }, ['role']],
      [{ email: 'a@example.com', role: 'member', message: 'hi' }, ['message']],
    ] as Array<[object, string[]]>) {
      const res = await t.request({ method: 'POST', url: `/v1/workspaces/${owner.workspaceId}/members`, token: owner.accessToken, payload });
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), expected);
    }
    const rows = await db.selectFrom('invitations').select('id').where('workspace_id', '=', owner.workspaceId).execute();
    assert.equal(rows.length, 0);
  });

  it('viewers and members cannot invite (403 insufficient_scope); an admin cannot invite an owner (403 forbidden)', async () => {
    const owner = await signUp(t);
    const viewer = await addMember(t, owner, 'viewer');
    const member = await addMember(t, owner, 'member');
    const admin = await addMember(t, owner, 'admin');
    for (const caller of [viewer, member]) {
      const res = await invite(t, caller, owner.workspaceId, { email: uniqueEmail(), role: 'viewer' });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().code, 'insufficient_scope');
    }
    const ownerByAdmin = await invite(t, admin, owner.workspaceId, { email: uniqueEmail(), role: 'owner' });
    assert.equal(ownerByAdmin.statusCode, 403, ownerByAdmin.body);
    assert.equal(ownerByAdmin.json().code, 'forbidden');
    const memberByAdmin = await invite(t, admin, owner.workspaceId, { email: uniqueEmail(), role: 'admin' });
    assert.equal(memberByAdmin.statusCode, 201, memberByAdmin.body);
    const ownerByOwner = await invite(t, owner, owner.workspaceId, { email: uniqueEmail(), role: 'owner' });
    assert.equal(ownerByOwner.statusCode, 201, ownerByOwner.body);

    const pending = await db.selectFrom('invitations').select(['id', 'invited_by']).where('workspace_id', '=', owner.workspaceId).where('accepted_at', 'is', null).execute();
    assert.deepEqual(pending.map((p) => p.id).sort(), [memberByAdmin.json().id, ownerByOwner.json().id].sort(), 'refused invitations left no row');
  });

  it('inviting an existing member is 409, whatever the case of the address', async () => {
    const owner = await signUp(t);
    const member = await addMember(t, owner, 'member');
    for (const email of [member.email, member.email.toUpperCase(), owner.email]) {
      const res = await invite(t, owner, owner.workspaceId, { email, role: 'admin' });
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(res.json().code, 'conflict');
    }
  });

  it('accepts end to end: membership with the invited role, usable at once through X-Workspace-Id', async () => {
    const owner = await signUp(t);
    const invitee = await signUp(t, { name: 'Grace' });
    const res = await invite(t, owner, owner.workspaceId, { email: invitee.email.toUpperCase(), role: 'member' });
    assert.equal(res.statusCode, 201, res.body);
    const { token } = invitationMail(t, res.json().id).meta;

    // Before accepting, the workspace is not the invitee's.
    const before = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}`, token: invitee.accessToken });
    assert.equal(before.statusCode, 404, before.body);

    const accepted = await accept(invitee, token);
    assert.equal(accepted.statusCode, 200, accepted.body);
    const body = accepted.json();
    assert.equal(body.workspace.id, owner.workspaceId);
    assert.equal(body.workspace.role, 'member');
    assert.deepEqual(
      { ...body.member, joined_at: undefined },
      { user_id: invitee.id, email: invitee.email, name: 'Grace', role: 'member', joined_at: undefined },
    );

    const membership = await db.selectFrom('memberships').selectAll().where('workspace_id', '=', owner.workspaceId).where('user_id', '=', invitee.id).executeTakeFirstOrThrow();
    assert.equal(membership.role, 'member');
    assert.equal(new Date(membership.created_at).toISOString(), body.member.joined_at);
    const row = await invitationRow(res.json().id);
    assert.equal(row.accepted_by, invitee.id);
    assert.notEqual(row.accepted_at, null);

    const viaHeader = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}`, token: invitee.accessToken, workspaceId: owner.workspaceId });
    assert.equal(viaHeader.statusCode, 200, viaHeader.body);
    assert.equal(viaHeader.json().role, 'member');
    const members = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}/members`, token: invitee.accessToken, workspaceId: owner.workspaceId });
    assert.equal(members.statusCode, 200, members.body);
    assert.ok(members.json().data.some((m: { user_id: string; role: string }) => m.user_id === invitee.id && m.role === 'member'));
    // The member role is the write scope: not enough to rename the workspace.
    const rename = await t.request({ method: 'PATCH', url: `/v1/workspaces/${owner.workspaceId}`, token: invitee.accessToken, workspaceId: owner.workspaceId, payload: { name: 'x' } });
    assert.equal(rename.statusCode, 403, rename.body);
    assert.equal(rename.json().code, 'insufficient_scope');
    // The personal workspace stays the default.
    const mine = await t.request({ method: 'GET', url: `/v1/workspaces/${invitee.workspaceId}`, token: invitee.accessToken });
    assert.equal(mine.json().role, 'owner');

    const audit = await db.selectFrom('audit_log').selectAll().where('workspace_id', '=', owner.workspaceId).where('action', '=', 'invitations.accept').execute();
    assert.deepEqual(audit.map((a) => [a.actor_id, a.resource_id, a.status_code]), [[invitee.id, res.json().id, 200]]);
    assert.ok(!audit.some((a) => a.route.includes(token) || (a.resource_id ?? '').includes(token)), 'the token is never audited');

    const again = await accept(invitee, token);
    assert.equal(again.statusCode, 409, again.body);
    assert.equal(again.json().code, 'invalid_state');
  });

  it('only the invited address may accept (403 forbidden); the invitation stays open', async () => {
    const owner = await signUp(t);
    const invitee = await signUp(t);
    const other = await signUp(t);
    const res = await invite(t, owner, owner.workspaceId, { email: invitee.email, role: 'viewer' });
    const { token } = invitationMail(t, res.json().id).meta;
    const wrong = await accept(other, token);
    assert.equal(wrong.statusCode, 403, wrong.body);
    assert.equal(wrong.json().code, 'forbidden');
    assert.equal((await invitationRow(res.json().id)).accepted_at, null);
    assert.equal(await db.selectFrom('memberships').select('role').where('workspace_id', '=', owner.workspaceId).where('user_id', '=', other.id).executeTakeFirst(), undefined);
    const right = await accept(invitee, token);
    assert.equal(right.statusCode, 200, right.body);
    assert.equal(right.json().member.role, 'viewer');
  });

  it('an unknown, revoked or expired token is 404', async () => {
    const owner = await signUp(t);
    const invitee = await signUp(t);
    const unknown = await accept(invitee, 'iv_doesnotexist');
    assert.equal(unknown.statusCode, 404, unknown.body);
    assert.equal(unknown.json().code, 'not_found');

    const first = await invite(t, owner, owner.workspaceId, { email: invitee.email, role: 'member' });
    const firstToken = invitationMail(t, first.json().id).meta.token;
    const revoke = await t.request({ method: 'DELETE', url: `/v1/workspaces/${owner.workspaceId}/invitations/${first.json().id}`, token: owner.accessToken });
    assert.equal(revoke.statusCode, 204, revoke.body);
    const revoked = await accept(invitee, firstToken);
    assert.equal(revoked.statusCode, 404, revoked.body);

    const second = await invite(t, owner, owner.workspaceId, { email: invitee.email, role: 'member' });
    const secondToken = invitationMail(t, second.json().id).meta.token;
    await db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', second.json().id).execute();
    const expired = await accept(invitee, secondToken);
    assert.equal(expired.statusCode, 404, expired.body);
    assert.equal(expired.json().code, 'not_found');
    assert.equal(await db.selectFrom('memberships').select('role').where('workspace_id', '=', owner.workspaceId).where('user_id', '=', invitee.id).executeTakeFirst(), undefined);
  });

  it('accepting while already a member is 409 and adds nothing', async () => {
    const owner = await signUp(t);
    const invitee = await signUp(t);
    const res = await invite(t, owner, owner.workspaceId, { email: invitee.email, role: 'admin' });
    const { token } = invitationMail(t, res.json().id).meta;
    // The user joined by other means meanwhile (a concurrent invitation, say).
    await db.insertInto('memberships').values({ workspace_id: owner.workspaceId, user_id: invitee.id, role: 'viewer', created_at: new Date(), updated_at: new Date() }).execute();
    const conflict = await accept(invitee, token);
    assert.equal(conflict.statusCode, 409, conflict.body);
    assert.equal(conflict.json().code, 'conflict');
    const role = await db.selectFrom('memberships').select('role').where('workspace_id', '=', owner.workspaceId).where('user_id', '=', invitee.id).executeTakeFirstOrThrow();
    assert.equal(role.role, 'viewer', 'the existing membership is unchanged');
  });

  it('a new invitation to the same address replaces the open one', async () => {
    const owner = await signUp(t);
    const invitee = await signUp(t);
    const first = await invite(t, owner, owner.workspaceId, { email: invitee.email, role: 'viewer' });
    const second = await invite(t, owner, owner.workspaceId, { email: invitee.email, role: 'admin' });
    assert.equal(second.statusCode, 201, second.body);
    assert.notEqual((await invitationRow(first.json().id)).revoked_at, null);
    const list = await listPending(owner, owner.workspaceId);
    assert.deepEqual(list.json().data.map((i: { id: string }) => i.id), [second.json().id]);
    const old = await accept(invitee, invitationMail(t, first.json().id).meta.token);
    assert.equal(old.statusCode, 404, old.body);
    const current = await accept(invitee, invitationMail(t, second.json().id).meta.token);
    assert.equal(current.statusCode, 200, current.body);
    assert.equal(current.json().member.role, 'admin');
  });

  it('lists only pending invitations, newest first, page by page', async () => {
    const owner = await signUp(t);
    const invitee = await signUp(t);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await invite(t, owner, owner.workspaceId, { email: uniqueEmail(), role: 'viewer' });
      ids.push(res.json().id);
    }
    const acceptedInv = await invite(t, owner, owner.workspaceId, { email: invitee.email, role: 'member' });
    assert.equal((await accept(invitee, invitationMail(t, acceptedInv.json().id).meta.token)).statusCode, 200);
    const revokedInv = await invite(t, owner, owner.workspaceId, { email: uniqueEmail(), role: 'viewer' });
    await t.request({ method: 'DELETE', url: `/v1/workspaces/${owner.workspaceId}/invitations/${revokedInv.json().id}`, token: owner.accessToken });
    const expiredInv = await invite(t, owner, owner.workspaceId, { email: uniqueEmail(), role: 'viewer' });
    await db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', expiredInv.json().id).execute();

    const res = await listPending(owner, owner.workspaceId);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(body.data.map((i: { id: string }) => i.id), [...ids].reverse());
    assert.ok(body.data.every((i: { status: string }) => i.status === 'pending'));
    assert.deepEqual(Object.keys(body.data[0]).sort(), INVITATION_FIELDS);
    assert.equal(body.has_more, false);

    const first = await listPending(owner, owner.workspaceId, '?limit=2');
    assert.equal(first.json().data.length, 2);
    assert.equal(first.json().has_more, true);
    const rest = await listPending(owner, owner.workspaceId, `?limit=2&cursor=${first.json().next_cursor}`);
    assert.deepEqual([...first.json().data, ...rest.json().data].map((i: { id: string }) => i.id), [...ids].reverse());
    assert.equal(rest.json().has_more, false);
    assert.equal(rest.json().next_cursor, null);

    const bad = await listPending(owner, owner.workspaceId, '?limit=0');
    assert.equal(bad.statusCode, 422, bad.body);
    assert.deepEqual(bad.json().errors.map((e: { path: string }) => e.path), ['query.limit']);

    const key = await createApiKey(t, owner, 'admin');
    const asKey = await t.request({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}/invitations`, token: key.key });
    assert.equal(asKey.statusCode, 200, asKey.body);
    assert.equal(asKey.json().data.length, 3);
  });

  it('members and viewers cannot list or revoke invitations (403)', async () => {
    const owner = await signUp(t);
    const member = await addMember(t, owner, 'member');
    const pending = await invite(t, owner, owner.workspaceId, { email: uniqueEmail(), role: 'viewer' });
    const list = await listPending(member, owner.workspaceId);
    assert.equal(list.statusCode, 403, list.body);
    assert.equal(list.json().code, 'insufficient_scope');
    const revoke = await t.request({ method: 'DELETE', url: `/v1/workspaces/${owner.workspaceId}/invitations/${pending.json().id}`, token: member.accessToken });
    assert.equal(revoke.statusCode, 403, revoke.body);
    assert.equal((await invitationRow(pending.json().id)).revoked_at, null);
  });

  it('revokes an invitation (idempotent); an accepted one is 409; another workspace\'s is 404', async () => {
    const owner = await signUp(t);
    const invitee = await signUp(t);
    const pending = await invite(t, owner, owner.workspaceId, { email: uniqueEmail(), role: 'viewer' });
    const url = `/v1/workspaces/${owner.workspaceId}/invitations/${pending.json().id}`;
    const res = await t.request({ method: 'DELETE', url, token: owner.accessToken });
    assert.equal(res.statusCode, 204, res.body);
    const revokedAt = (await invitationRow(pending.json().id)).revoked_at;
    assert.notEqual(revokedAt, null);
    const again = await t.request({ method: 'DELETE', url, token: owner.accessToken });
    assert.equal(again.statusCode, 204, again.body);
    assert.deepEqual((await invitationRow(pending.json().id)).revoked_at, revokedAt, 'the first revocation time is kept');
    const audit = await db.selectFrom('audit_log').selectAll().where('workspace_id', '=', owner.workspaceId).where('action', '=', 'workspaces.invitations.delete').execute();
    assert.ok(audit.length >= 1 && audit.every((a) => a.resource_id === pending.json().id));

    const used = await invite(t, owner, owner.workspaceId, { email: invitee.email, role: 'member' });
    await accept(invitee, invitationMail(t, used.json().id).meta.token);
    const late = await t.request({ method: 'DELETE', url: `/v1/workspaces/${owner.workspaceId}/invitations/${used.json().id}`, token: owner.accessToken });
    assert.equal(late.statusCode, 409, late.body);
    assert.equal(late.json().code, 'invalid_state');
    assert.equal((await invitationRow(used.json().id)).revoked_at, null);

    const other = await signUp(t);
    const theirs = await invite(t, other, other.workspaceId, { email: uniqueEmail(), role: 'viewer' });
    const cross = await t.request({ method: 'DELETE', url: `/v1/workspaces/${owner.workspaceId}/invitations/${theirs.json().id}`, token: owner.accessToken });
    assert.equal(cross.statusCode, 404, cross.body);
    assert.equal(cross.json().code, 'not_found');
    assert.equal((await invitationRow(theirs.json().id)).revoked_at, null);
  });
});

const shared: { app?: Promise<TestApp> } = {};
const getApp = () => {
  shared.app ??= buildTestApp();
  return shared.app;
};
const bearer = (user: TestUser) => ({ authorization: `Bearer ${user.accessToken}` });

securitySuite('invitations', getApp, {
  'POST /v1/workspaces/{id}/members': {
    scope: 'admin',
    userOnly: true,
    ownedResource: true,
    prepare: async (_t, owner) => ({
      method: 'POST',
      url: `/v1/workspaces/${owner.workspaceId}/members`,
      headers: bearer(owner),
      payload: { email: uniqueEmail(), role: 'member' },
    }),
  },
  'GET /v1/workspaces/{id}/invitations': {
    scope: 'admin',
    ownedResource: true,
    prepare: async (_t, owner) => ({ method: 'GET', url: `/v1/workspaces/${owner.workspaceId}/invitations`, headers: bearer(owner) }),
  },
  'DELETE /v1/workspaces/{id}/invitations/{inv_id}': {
    scope: 'admin',
    userOnly: true,
    ownedResource: true,
    prepare: async (t, owner) => {
      const res = await invite(t, owner, owner.workspaceId, { email: uniqueEmail(), role: 'viewer' });
      return { method: 'DELETE', url: `/v1/workspaces/${owner.workspaceId}/invitations/${res.json().id}`, headers: bearer(owner) };
    },
  },
  'POST /v1/invitations/{token}/accept': {
    scope: 'read-only',
    auth: 'user',
    prepare: async (t, owner) => {
      // `owner` is the invitee here: someone else's workspace invites them.
      const host = await signUp(t);
      const res = await invite(t, host, host.workspaceId, { email: owner.email, role: 'viewer' });
      const { token } = invitationMail(t, res.json().id).meta;
      return { method: 'POST', url: `/v1/invitations/${token}/accept`, headers: bearer(owner) };
    },
  },
});
