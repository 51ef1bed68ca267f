import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { addMember } from '../../src/modules/invitations/testing.ts';
import type { Role, Scope } from '../../src/platform/auth/access.ts';
import type { TestApp } from './app.ts';
import { createApiKey, signUp, type TestUser } from './fixtures.ts';

// The shared security suite, run against every authenticated route: no credentials → 401,
// a malformed or revoked credential → 401, a caller below the route's scope → 403 (an API key of
// the scope below and a member whose role maps to it; any API key on a user-token route), the
// least caller admitted on a read-only route (a viewer's JWT, a read-only key), and a resource of
// another workspace → 404 (never 403, never its data).

export interface SecurityCase {
  /** Least scope the route needs; `userOnly` routes refuse every API key with 403 forbidden. */
  scope: Scope;
  userOnly?: boolean;
  /** 'user' routes act on the caller's own account and have no workspace scope. */
  auth?: 'workspace' | 'user';
  /** Builds the request as `owner` would send it (a resource of the owner's workspace, when it has one). */
  prepare(t: TestApp, owner: TestUser): Promise<InjectOptions>;
  /** The request names a resource: a caller from another workspace must get 404. */
  ownedResource?: boolean;
}

const BELOW: Record<Scope, Scope | undefined> = { 'read-only': undefined, write: 'read-only', admin: 'write' };
/** The role whose scope (DESIGN part 5: owner/admin → admin, member → write, viewer → read-only) is this one. */
const ROLE_OF: Record<Scope, Role> = { 'read-only': 'viewer', write: 'member', admin: 'admin' };

/** What the 403 test of a route checks, as its title says. */
function refusalTitle(c: SecurityCase): string {
  if (c.auth === 'user') return '403 forbidden for an API key (a user-token route)';
  const below = BELOW[c.scope];
  const key = c.userOnly ? '403 forbidden for an admin API key (user-only route); ' : '';
  if (!below) return `${key}a viewer's JWT${c.userOnly ? ' is' : ' and a read-only API key are'} admitted (read-only route)`;
  return `${key}403 insufficient_scope for a ${ROLE_OF[below]}'s JWT${c.userOnly ? '' : ` and a ${below} API key`} (needs ${c.scope})`;
}

/** The workspace a request acts in: the one its path names (/v1/workspaces/{id}/…), else its X-Workspace-Id, else the owner's. */
function actingWorkspace(request: InjectOptions, owner: TestUser): string {
  const inPath = /^\/v1\/workspaces\/(ws_[0-9a-z]+)/.exec(String(request.url ?? ''));
  const header = (request.headers as Record<string, string> | undefined)?.['x-workspace-id'];
  return inPath?.[1] ?? header ?? owner.workspaceId;
}

/** `request` with another Authorization (none when omitted) and, for a JWT, the workspace it acts in. */
function send(t: TestApp, request: InjectOptions, authorization?: string, workspaceId?: string) {
  const headers = { ...(request.headers ?? {}) } as Record<string, string>;
  delete headers.authorization;
  if (authorization) headers.authorization = authorization;
  if (workspaceId) headers['x-workspace-id'] = workspaceId;
  return t.app.inject({ ...request, headers });
}

export function securitySuite(name: string, getApp: () => Promise<TestApp>, cases: Record<string, SecurityCase>) {
  describe(`security: ${name}`, () => {
    for (const [route, c] of Object.entries(cases)) {
      it(`${route}: 401 without credentials, with a malformed token and with a revoked key`, async () => {
        const t = await getApp();
        const owner = await signUp(t);
        const request = await c.prepare(t, owner);
        const none = await send(t, request);
        assert.equal(none.statusCode, 401, none.body);
        assert.equal(none.json().code, 'unauthorized');
        assert.match(String(none.headers['www-authenticate']), /^Bearer/);
        const garbage = await send(t, request, 'Bearer not-a-token');
        assert.equal(garbage.statusCode, 401, garbage.body);
        const badKey = await send(t, request, `Bearer sk_${'A'.repeat(46)}`);
        assert.equal(badKey.statusCode, 401, badKey.body);
        if (c.auth !== 'user' && !c.userOnly) {
          const key = await createApiKey(t, owner, 'admin', 'to revoke');
          const revoke = await t.request({ method: 'DELETE', url: `/v1/api-keys/${key.id}`, token: owner.accessToken, workspaceId: owner.workspaceId });
          assert.equal(revoke.statusCode, 204, revoke.body);
          const revoked = await send(t, request, `Bearer ${key.key}`);
          assert.equal(revoked.statusCode, 401, revoked.body);
        }
      });

      it(`${route}: ${refusalTitle(c)}`, async () => {
        const t = await getApp();
        const owner = await signUp(t);
        const request = await c.prepare(t, owner);
        if (c.auth === 'user') {
          const key = await createApiKey(t, owner, 'admin');
          const res = await send(t, request, `Bearer ${key.key}`);
          assert.equal(res.statusCode, 403, res.body);
          assert.equal(res.json().code, 'forbidden');
          return;
        }
        // The callers below act in the workspace the request acts in: an API key of it, and a
        // member of it whose role maps to the scope below the route's (or a viewer's, the least).
        const workspaceId = actingWorkspace(request, owner);
        const inWorkspace = { ...owner, workspaceId };
        if (c.userOnly) {
          const key = await createApiKey(t, inWorkspace, 'admin');
          const res = await send(t, request, `Bearer ${key.key}`);
          assert.equal(res.statusCode, 403, `admin API key: ${res.body}`);
          assert.equal(res.json().code, 'forbidden');
        }
        const below = BELOW[c.scope];
        const member = await addMember(t, owner, ROLE_OF[below ?? 'read-only'], workspaceId);
        const asMember = await send(t, request, `Bearer ${member.accessToken}`, workspaceId);
        if (!below) {
          assert.ok(asMember.statusCode < 400, `a viewer's JWT refused: ${asMember.statusCode} ${asMember.body}`);
          if (!c.userOnly) {
            const key = await createApiKey(t, inWorkspace, 'read-only');
            const res = await send(t, request, `Bearer ${key.key}`);
            assert.ok(res.statusCode < 400, `a read-only key refused: ${res.statusCode} ${res.body}`);
          }
          return;
        }
        assert.equal(asMember.statusCode, 403, `${ROLE_OF[below]}'s JWT: ${asMember.body}`);
        assert.equal(asMember.json().code, 'insufficient_scope');
        if (!c.userOnly) {
          const key = await createApiKey(t, inWorkspace, below);
          const res = await send(t, request, `Bearer ${key.key}`);
          assert.equal(res.statusCode, 403, `${below} API key: ${res.body}`);
          assert.equal(res.json().code, 'insufficient_scope');
        }
      });

      if (c.ownedResource) {
        it(`${route}: 404 for a caller of another workspace`, async () => {
          const t = await getApp();
          const owner = await signUp(t);
          const request = await c.prepare(t, owner);
          const stranger = await signUp(t);
          const asUser = await send(t, request, `Bearer ${stranger.accessToken}`);
          assert.equal(asUser.statusCode, 404, asUser.body);
          assert.equal(asUser.json().code, 'not_found');
          if (!c.userOnly) {
            const strangerKey = await createApiKey(t, stranger, 'admin');
            const asKey = await send(t, request, `Bearer ${strangerKey.key}`);
            assert.equal(asKey.statusCode, 404, asKey.body);
          }
        });
      }
    }
  });
}
