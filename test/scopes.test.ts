import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type LightMyRequestResponse } from 'fastify';
import { addMember } from '../src/modules/invitations/testing.ts';
import type { Access } from '../src/platform/auth/access.ts';
import { registerAuthentication } from '../src/platform/auth/authenticate.ts';
import { registerErrorHandling } from '../src/platform/http/error-handler.ts';
import { closeAtEnd } from './support/cleanup.ts';
import { buildTestApp } from './support/app.ts';
import { createApiKey, signUp, type TestUser } from './support/fixtures.ts';

// Scopes at the request gate (platform/auth/authenticate.ts). Real routes where this project has
// them, and a probe app carrying the real gate on the same platform (same database, JWT signer and
// limiter) for the combinations no module of ours offers yet: a write route open to API keys.

describe('scopes', async () => {
  const t = await buildTestApp();

  const probe = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
  registerErrorHandling(probe);
  registerAuthentication(probe, t.platform);
  const routes: Record<string, { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; access: Access }> = {
    read: { method: 'GET', access: { auth: 'workspace', scope: 'read-only' } },
    write: { method: 'POST', access: { auth: 'workspace', scope: 'write' } },
    remove: { method: 'DELETE', access: { auth: 'workspace', scope: 'write' } },
    admin: { method: 'GET', access: { auth: 'workspace', scope: 'admin' } },
    adminWrite: { method: 'PATCH', access: { auth: 'workspace', scope: 'admin' } },
    userOnly: { method: 'POST', access: { auth: 'workspace', scope: 'write', userOnly: true } },
    me: { method: 'GET', access: { auth: 'user' } },
  };
  for (const [name, route] of Object.entries(routes)) {
    probe.route({
      method: route.method,
      url: `/v1/probe/${name}`,
      config: { access: route.access },
      handler: async (request) => ({ principal: request.principal?.type, scope: request.workspace?.scope ?? null }),
    });
  }
  await probe.ready();
  closeAtEnd(() => probe.close());

  const owner = await signUp(t);
  const keys = {
    'read-only': await createApiKey(t, owner, 'read-only'),
    write: await createApiKey(t, owner, 'write'),
    admin: await createApiKey(t, owner, 'admin'),
  };
  const call = (name: string, token: string) =>
    probe.inject({ method: routes[name].method, url: `/v1/probe/${name}`, headers: { authorization: `Bearer ${token}` } });

  const expected: Record<string, Record<'read-only' | 'write' | 'admin' | 'owner', number | string>> = {
    read: { 'read-only': 200, write: 200, admin: 200, owner: 200 },
    write: { 'read-only': 'insufficient_scope', write: 200, admin: 200, owner: 200 },
    remove: { 'read-only': 'insufficient_scope', write: 200, admin: 200, owner: 200 },
    admin: { 'read-only': 'insufficient_scope', write: 'insufficient_scope', admin: 200, owner: 200 },
    adminWrite: { 'read-only': 'insufficient_scope', write: 'insufficient_scope', admin: 200, owner: 200 },
    userOnly: { 'read-only': 'forbidden', write: 'forbidden', admin: 'forbidden', owner: 200 },
    me: { 'read-only': 'forbidden', write: 'forbidden', admin: 'forbidden', owner: 200 },
  };

  for (const [name, row] of Object.entries(expected)) {
    it(`${routes[name].method} ${name} (${JSON.stringify(routes[name].access)})`, async () => {
      for (const [caller, outcome] of Object.entries(row)) {
        const token = caller === 'owner' ? owner.accessToken : keys[caller as keyof typeof keys].key;
        const res = await call(name, token);
        if (outcome === 200) {
          assert.equal(res.statusCode, 200, `${caller}: ${res.body}`);
          assert.equal(res.json().principal, caller === 'owner' ? 'user' : 'api_key');
        } else {
          assert.equal(res.statusCode, 403, `${caller}: ${res.body}`);
          assert.equal(res.json().code, outcome, `${caller}: ${res.body}`);
        }
      }
    });
  }

  /** HEAD answers as GET does (status, content type, length), with no body. */
  function assertHeadMatchesGet(head: LightMyRequestResponse, get: LightMyRequestResponse) {
    assert.equal(get.statusCode, 200, get.body);
    assert.ok(get.body.length > 0, 'GET has a body to compare with');
    assert.equal(head.statusCode, get.statusCode, head.body);
    assert.equal(head.body, '', 'HEAD has no body');
    assert.equal(head.rawPayload.length, 0);
    assert.deepEqual(Object.keys(head.headers).sort(), Object.keys(get.headers).sort(), 'the same headers');
    assert.equal(head.headers['content-type'], get.headers['content-type']);
    if (get.headers['content-length'] !== undefined) {
      assert.equal(get.headers['content-length'], String(get.rawPayload.length));
      assert.equal(head.headers['content-length'], get.headers['content-length'], "HEAD announces GET's length");
    }
  }

  it("a read-only key may use HEAD: GET's status and headers, no body", async () => {
    const headers = { authorization: `Bearer ${keys['read-only'].key}` };
    const get = await probe.inject({ method: 'GET', url: '/v1/probe/read', headers });
    const head = await probe.inject({ method: 'HEAD', url: '/v1/probe/read', headers });
    assertHeadMatchesGet(head, get);
  });

  it("on the real routes: HEAD of an agent answers its GET's status and headers with no body, for a read-only key", async () => {
    const created = await t.request({ method: 'POST', url: '/v1/agents', token: owner.accessToken, workspaceId: owner.workspaceId, payload: { name: 'Headed' } });
    assert.equal(created.statusCode, 201, created.body);
    const url = `/v1/agents/${created.json().id}`;
    const get = await t.request({ method: 'GET', url, token: keys['read-only'].key });
    const head = await t.request({ method: 'HEAD', url, token: keys['read-only'].key });
    assertHeadMatchesGet(head, get);
    assert.equal(get.json().name, 'Headed');
  });

  it('on the real routes, role → scope: a viewer cannot write, a member cannot administer, each is admitted at its own scope', async () => {
    const boss = await signUp(t);
    const callers: Record<string, TestUser> = {
      owner: boss,
      admin: await addMember(t, boss, 'admin'),
      member: await addMember(t, boss, 'member'),
      viewer: await addMember(t, boss, 'viewer'),
    };
    const requests = {
      read: { method: 'GET' as const, url: '/v1/agents' },
      write: { method: 'POST' as const, url: '/v1/agents', payload: { name: 'by role' } },
      admin: { method: 'GET' as const, url: '/v1/audit-log' },
    };
    const expected: Record<string, Record<keyof typeof requests, number>> = {
      owner: { read: 200, write: 201, admin: 200 },
      admin: { read: 200, write: 201, admin: 200 },
      member: { read: 200, write: 201, admin: 403 },
      viewer: { read: 200, write: 403, admin: 403 },
    };
    for (const [role, user] of Object.entries(callers)) {
      for (const [name, request] of Object.entries(requests) as Array<[keyof typeof requests, (typeof requests)[keyof typeof requests]]>) {
        // In the boss's workspace: each member's first workspace is their own, where they are owner.
        const res = await t.request({ ...request, token: user.accessToken, workspaceId: boss.workspaceId });
        assert.equal(res.statusCode, expected[role][name], `${role} ${name}: ${res.body}`);
        if (res.statusCode === 403) {
          assert.equal(res.json().code, 'insufficient_scope', `${role} ${name}`);
          assert.match(res.json().detail, new RegExp(`the caller has ${role === 'viewer' ? 'read-only' : 'write'}$`));
        }
      }
    }
    const agents = await t.platform.db.selectFrom('agents').select('id').where('workspace_id', '=', boss.workspaceId).execute();
    assert.equal(agents.length, 3, 'created by the owner, the admin and the member only');
  });

  it('on the real routes: a write key cannot read the audit log (admin)', async () => {
    const res = await t.request({ method: 'GET', url: '/v1/audit-log', token: keys.write.key });
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(res.json().code, 'insufficient_scope');
    assert.match(res.json().detail, /needs the admin scope; the caller has write/);
    const admin = await t.request({ method: 'GET', url: '/v1/audit-log', token: keys.admin.key });
    assert.equal(admin.statusCode, 200, admin.body);
  });

  it('on the real routes: no API key, admin or not, may manage API keys (userOnly)', async () => {
    for (const key of Object.values(keys)) {
      for (const request of [
        { method: 'POST' as const, url: '/v1/api-keys', payload: { name: 'minted by a key', scope: 'admin' } },
        { method: 'GET' as const, url: '/v1/api-keys' },
        { method: 'DELETE' as const, url: `/v1/api-keys/${key.id}` },
      ]) {
        const res = await t.request({ ...request, token: key.key });
        assert.equal(res.statusCode, 403, `${key.scope} ${request.method}: ${res.body}`);
        assert.equal(res.json().code, 'forbidden');
      }
    }
    const stored = await t.platform.db.selectFrom('api_keys').select(['name', 'revoked_at']).where('workspace_id', '=', owner.workspaceId).execute();
    assert.equal(stored.length, 3, 'no key minted');
    assert.ok(stored.every((k) => k.revoked_at === null), 'none revoked');
  });
});
