import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { gateApp, request } from '../../../test/support/auth-gate.ts';
import { newId } from '../ids.ts';

// The request gate's workspace and scope rules (authenticate.ts), on the small in-process app of
// test/support/auth-gate.ts: which workspace a user or an API key acts in (first membership,
// X-Workspace-Id, the path's workspace parameter), the routes refused to API keys, the scope a
// method needs, and the workspace context the gate leaves on the request — before the scope check,
// so a refused write is in the audit trail too (read here from `x-test-workspace`, as the audit
// trail's onSend hook reads it).

function assertProblem(res: LightMyRequestResponse, status: number, code: string, detail: string) {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.json().code, code, res.body);
  assert.equal(res.json().detail, detail, res.body);
}

/** The workspace context the gate left on the request (null: none). */
const contextOf = (res: LightMyRequestResponse) => JSON.parse(String(res.headers['x-test-workspace']));

const NOT_FOUND = 'workspace not found';
const USER_ONLY = 'this operation needs a user access token (JWT), not an API key';

describe('the workspace a user acts in', async () => {
  const g = await gateApp();

  it('their first membership by created_at, then by workspace id; the context names role, scope and user', async () => {
    const ada = await g.user();
    const token = await g.token(ada.id, await g.session(ada.id));
    const [earlierId, laterId] = [newId('ws'), newId('ws')];
    await g.workspace(earlierId);
    await g.workspace(laterId);
    const now = g.clock.now().getTime();
    await g.member(earlierId, ada.id, 'viewer', new Date(now + 1000));
    await g.member(laterId, ada.id, 'member', new Date(now));
    const res = await request(g.app, 'GET', '/ws/read', { token });
    assert.deepEqual(res.json().workspace, { workspaceId: laterId, scope: 'write', role: 'member', userId: ada.id, actor: { type: 'user', id: ada.id, name: ada.email } });

    const bob = await g.user();
    const bobToken = await g.token(bob.id, await g.session(bob.id));
    await g.member(laterId, bob.id, 'admin', new Date(now));
    await g.member(earlierId, bob.id, 'viewer', new Date(now));
    assert.equal((await request(g.app, 'GET', '/ws/read', { token: bobToken })).json().workspace.workspaceId, earlierId, 'same created_at: the lower id');
  });

  it('X-Workspace-Id picks one of their workspaces; empty, it is not given; naming another, 404', async () => {
    const ada = await g.tenant('owner');
    const second = await g.workspace();
    await g.member(second, ada.id, 'viewer', new Date(g.clock.now().getTime() + 1000));
    const asking = (workspace: string) => request(g.app, 'GET', '/ws/read', { token: ada.token, headers: { 'x-workspace-id': workspace } });
    assert.deepEqual((await asking(second)).json().workspace, { workspaceId: second, scope: 'read-only', role: 'viewer', userId: ada.id, actor: { type: 'user', id: ada.id, name: ada.email } });
    assert.equal((await asking('')).json().workspace.workspaceId, ada.workspaceId);
    const stranger = await g.workspace();
    const res = await asking(stranger);
    assertProblem(res, 404, 'not_found', NOT_FOUND);
    assert.equal(contextOf(res), null);
  });

  it('a membership is served from the cache once looked up (first workspace and a named one apart); a missing one is looked up again', async () => {
    const ada = await g.tenant('owner');
    const second = await g.workspace();
    const asking = (workspace?: string) => request(g.app, 'GET', '/ws/read', { token: ada.token, headers: workspace ? { 'x-workspace-id': workspace } : {} });
    assert.equal((await asking(second)).statusCode, 404);
    await g.member(second, ada.id, 'viewer', new Date(g.clock.now().getTime() + 1000));
    assert.equal((await asking(second)).json().workspace.role, 'viewer', 'the 404 was not kept');
    assert.equal((await asking()).json().workspace.workspaceId, ada.workspaceId);
    // Removed behind the gate's back (no gate event published): the cached verdicts still serve.
    await g.db.deleteFrom('memberships').where('user_id', '=', ada.id).execute();
    assert.equal((await asking(second)).json().workspace.role, 'viewer');
    assert.equal((await asking()).json().workspace.workspaceId, ada.workspaceId);
  });

  it('the path parameter wins over X-Workspace-Id; a workspace they are not in is 404', async () => {
    const ada = await g.tenant('admin');
    const second = await g.workspace();
    await g.member(second, ada.id, 'viewer');
    const res = await request(g.app, 'GET', `/workspaces/${ada.workspaceId}/things`, { token: ada.token, headers: { 'x-workspace-id': second } });
    assert.equal(res.json().workspace.workspaceId, ada.workspaceId, res.body);
    assert.equal((await request(g.app, 'GET', `/workspaces/${second}/things`, { token: ada.token })).json().workspace.role, 'viewer');
    assertProblem(await request(g.app, 'GET', `/workspaces/${await g.workspace()}/things`, { token: ada.token }), 404, 'not_found', NOT_FOUND);
  });

  it('a workspace parameter holding U+0000 is not found, before any query', async () => {
    const ada = await g.tenant();
    const key = await g.apiKey(ada.workspaceId, 'admin');
    for (const token of [ada.token, key.key]) {
      assertProblem(await request(g.app, 'GET', `/workspaces/${ada.workspaceId}%00/things`, { token }), 404, 'not_found', NOT_FOUND);
    }
  });

  it('an empty workspace in the path, or a workspaceParam naming no path parameter, is not found: not their first workspace', async () => {
    const ada = await g.tenant();
    const key = await g.apiKey(ada.workspaceId, 'admin');
    for (const token of [ada.token, key.key]) {
      for (const url of ['/workspaces//things', `/misnamed/${ada.workspaceId}`]) {
        const res = await request(g.app, 'GET', url, { token });
        assertProblem(res, 404, 'not_found', NOT_FOUND);
        assert.equal(contextOf(res), null, url);
      }
    }
  });
});

describe('the workspace an API key acts in', async () => {
  const g = await gateApp();

  it("always its own: named by the path, it must be the key's; X-Workspace-Id is ignored", async () => {
    const ada = await g.tenant();
    const other = await g.tenant();
    const key = await g.apiKey(ada.workspaceId, 'read-only');
    const context = { workspaceId: ada.workspaceId, scope: 'read-only', actor: { type: 'api_key', id: key.id, name: key.name } };
    assert.deepEqual((await request(g.app, 'GET', `/workspaces/${ada.workspaceId}/things`, { token: key.key })).json().workspace, context);
    assert.deepEqual((await request(g.app, 'GET', '/ws/read', { token: key.key, headers: { 'x-workspace-id': other.workspaceId } })).json().workspace, context);
    const elsewhere = await request(g.app, 'GET', `/workspaces/${other.workspaceId}/things`, { token: key.key });
    assertProblem(elsewhere, 404, 'not_found', NOT_FOUND);
    assert.equal(contextOf(elsewhere), null);
  });

  it('a workspaceParam naming no parameter of the path is an empty workspace id: 404 for a key', async () => {
    const ada = await g.tenant();
    const key = await g.apiKey(ada.workspaceId, 'admin');
    assertProblem(await request(g.app, 'GET', `/misnamed/${ada.workspaceId}`, { token: key.key }), 404, 'not_found', NOT_FOUND);
  });

  it('userOnly refuses a key (403); in its own workspace the attempt keeps its context (audited), elsewhere not', async () => {
    const ada = await g.tenant();
    const other = await g.tenant();
    const key = await g.apiKey(ada.workspaceId, 'admin');
    const context = { workspaceId: ada.workspaceId, scope: 'admin', actor: { type: 'api_key', id: key.id, name: key.name } };
    for (const url of ['/ws/user-only', `/workspaces/${ada.workspaceId}/user-only`]) {
      const res = await request(g.app, 'POST', url, { token: key.key });
      assertProblem(res, 403, 'forbidden', USER_ONLY);
      assert.deepEqual(contextOf(res), context, url);
    }
    const elsewhere = await request(g.app, 'POST', `/workspaces/${other.workspaceId}/user-only`, { token: key.key });
    assertProblem(elsewhere, 403, 'forbidden', USER_ONLY);
    assert.equal(contextOf(elsewhere), null);
    assert.equal((await request(g.app, 'POST', '/ws/user-only', { token: ada.token })).statusCode, 200);
    assert.equal((await request(g.app, 'POST', `/workspaces/${ada.workspaceId}/user-only`, { token: ada.token })).statusCode, 200);
  });

  it("user routes refuse a key (403); a user passes without any workspace, and none is resolved", async () => {
    const ada = await g.tenant();
    const key = await g.apiKey(ada.workspaceId, 'admin');
    const refused = await request(g.app, 'GET', '/me', { token: key.key });
    assertProblem(refused, 403, 'forbidden', USER_ONLY);
    assert.equal(contextOf(refused), null);
    const loner = await g.user();
    const res = await request(g.app, 'GET', '/me', { token: await g.token(loner.id, await g.session(loner.id)) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().user.userId, loner.id);
    assert.equal(contextOf(res), null);
  });
});

describe('scopes', async () => {
  const g = await gateApp();

  it('read-only reads with GET and HEAD, and writes nothing, even on a read-only route', async () => {
    const ada = await g.tenant();
    const key = await g.apiKey(ada.workspaceId, 'read-only');
    assert.equal((await request(g.app, 'GET', '/ws/read', { token: key.key })).statusCode, 200);
    assert.equal((await request(g.app, 'HEAD', '/ws/read', { token: key.key })).statusCode, 200);
    const refused = await request(g.app, 'POST', '/ws/read', { token: key.key });
    assertProblem(refused, 403, 'insufficient_scope', 'this operation needs the read-only scope; the caller has read-only');
    assert.equal(contextOf(refused).workspaceId, ada.workspaceId, 'set before the scope check');
    assertProblem(await request(g.app, 'GET', '/ws/write', { token: key.key }), 403, 'insufficient_scope', 'this operation needs the write scope; the caller has read-only');
  });

  it('write writes on read-only and write routes, not on admin ones; admin passes everywhere', async () => {
    const ada = await g.tenant();
    const write = await g.apiKey(ada.workspaceId, 'write');
    const admin = await g.apiKey(ada.workspaceId, 'admin');
    assert.equal((await request(g.app, 'POST', '/ws/read', { token: write.key })).statusCode, 200);
    assert.equal((await request(g.app, 'POST', '/ws/write', { token: write.key })).statusCode, 200);
    const refused = await request(g.app, 'GET', '/ws/admin', { token: write.key });
    assertProblem(refused, 403, 'insufficient_scope', 'this operation needs the admin scope; the caller has write');
    assert.equal(contextOf(refused).actor.id, write.id, 'set before the scope check');
    assert.equal((await request(g.app, 'GET', '/ws/admin', { token: admin.key })).statusCode, 200);
    assert.equal((await request(g.app, 'POST', '/ws/write', { token: admin.key })).statusCode, 200);
  });

  it("a user's scope is their role's: a viewer reads only, a member writes", async () => {
    const viewer = await g.tenant('viewer');
    assert.equal((await request(g.app, 'GET', '/ws/read', { token: viewer.token })).statusCode, 200);
    const refused = await request(g.app, 'POST', '/ws/read', { token: viewer.token });
    assertProblem(refused, 403, 'insufficient_scope', 'this operation needs the read-only scope; the caller has read-only');
    assert.equal(contextOf(refused).role, 'viewer');
    const member = await g.tenant('member');
    assert.equal((await request(g.app, 'POST', '/ws/write', { token: member.token })).statusCode, 200);
  });

  it("the request's traceparent is copied onto the workspace context, for a user and a key", async () => {
    const ada = await g.tenant();
    const key = await g.apiKey(ada.workspaceId, 'read-only');
    const traceParent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    for (const token of [ada.token, key.key]) {
      const res = await request(g.app, 'GET', '/ws/read', { token, headers: { 'x-test-traceparent': traceParent } });
      assert.equal(res.json().workspace.traceParent, traceParent);
      assert.equal((await request(g.app, 'GET', '/ws/read', { token })).json().workspace.traceParent, undefined);
    }
  });
});
