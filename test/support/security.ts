import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import type { Scope } from '../../src/platform/auth/access.ts';
import type { TestApp } from './app.ts';
import { createApiKey, signUp, type TestUser } from './fixtures.ts';

// The shared security suite, run against every authenticated route: no credentials → 401,
// a malformed or revoked credential → 401, a caller below the route's scope → 403, and a
// resource of another workspace → 404 (never 403, never its data).

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

function send(t: TestApp, request: InjectOptions, authorization?: string) {
  const headers = { ...(request.headers ?? {}) } as Record<string, string>;
  delete headers.authorization;
  if (authorization) headers.authorization = authorization;
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

      it(`${route}: 403 for a caller below the ${c.userOnly || c.auth === 'user' ? 'user-token' : c.scope} requirement`, async (ctx) => {
        const t = await getApp();
        const owner = await signUp(t);
        const request = await c.prepare(t, owner);
        if (c.userOnly || c.auth === 'user') {
          const key = await createApiKey(t, owner, 'admin');
          const res = await send(t, request, `Bearer ${key.key}`);
          assert.equal(res.statusCode, 403, res.body);
          assert.equal(res.json().code, 'forbidden');
          return;
        }
        const below = BELOW[c.scope];
        if (!below) {
          ctx.diagnostic('read-only routes admit every scope; checking a read-only key is admitted instead');
          const key = await createApiKey(t, owner, 'read-only');
          const res = await send(t, request, `Bearer ${key.key}`);
          assert.ok(res.statusCode < 400, `read-only key refused: ${res.statusCode} ${res.body}`);
          return;
        }
        const key = await createApiKey(t, owner, below);
        const res = await send(t, request, `Bearer ${key.key}`);
        assert.equal(res.statusCode, 403, res.body);
        assert.equal(res.json().code, 'insufficient_scope');
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
