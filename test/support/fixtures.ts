import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestApp } from './app.ts';

// Per-test tenants, made through the real API: a user (registered and logged in), their
// personal workspace, and API keys of a chosen scope.

export interface TestUser {
  id: string;
  email: string;
  password: string;
  accessToken: string;
  refreshToken: string;
  workspaceId: string;
}

export function uniqueEmail(tag = 'user'): string {
  return `${tag}-${randomBytes(5).toString('hex')}@example.com`;
}

/**
 * Registers and logs in a user. `remoteAddress` is the client address of those two requests (a
 * function gives each its own), so tests of per-IP limits can keep the fixture out of their buckets.
 */
export async function signUp(
  t: TestApp,
  options: { email?: string; password?: string; name?: string; remoteAddress?: string | (() => string) } = {},
): Promise<TestUser> {
  const email = options.email ?? uniqueEmail();
  const password = options.password ?? 'correct horse battery';
  const from = () => (typeof options.remoteAddress === 'function' ? options.remoteAddress() : options.remoteAddress);
  const registered = await t.request({ method: 'POST', url: '/v1/auth/register', remoteAddress: from(), payload: { email, password, ...(options.name ? { name: options.name } : {}) } });
  assert.equal(registered.statusCode, 201, registered.body);
  const login = await t.request({ method: 'POST', url: '/v1/auth/login', remoteAddress: from(), payload: { email, password } });
  assert.equal(login.statusCode, 200, login.body);
  const tokens = login.json();
  const membership = await t.platform.db
    .selectFrom('memberships')
    .select('workspace_id')
    .where('user_id', '=', registered.json().id)
    .orderBy('created_at', 'asc')
    .executeTakeFirstOrThrow();
  return {
    id: registered.json().id,
    email,
    password,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    workspaceId: membership.workspace_id,
  };
}

export interface TestKey {
  id: string;
  key: string;
  scope: 'read-only' | 'write' | 'admin';
}

/** Creates an API key in the user's workspace (POST /v1/api-keys with the user's JWT). */
export async function createApiKey(t: TestApp, user: TestUser, scope: TestKey['scope'], name = `${scope} key`): Promise<TestKey> {
  const res = await t.request({ method: 'POST', url: '/v1/api-keys', token: user.accessToken, workspaceId: user.workspaceId, payload: { name, scope } });
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json();
  return { id: body.id, key: body.key, scope };
}
