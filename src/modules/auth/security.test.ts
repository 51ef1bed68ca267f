import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { type SecurityCase, securitySuite } from '../../../test/support/security.ts';
import { sha256Hex } from '../../platform/secrets.ts';
import { assertNoSecrets, mailedToken } from './test-support.ts';

// Every user route of the auth module: 401 without or with a bad credential, 403 for an API key,
// and for DELETE /sessions/{id} a 404 for another user's session. Then a sweep over every auth
// route's answers (successes and errors) for leaked hashes.

const app = buildTestApp();
const getApp = () => app;

const sessionIdOf = async (t: TestApp, user: TestUser) =>
  (await t.platform.db.selectFrom('refresh_tokens').select('session_id').where('token_hash', '=', sha256Hex(user.refreshToken)).executeTakeFirstOrThrow()).session_id;

const userRoute = (prepare: (t: TestApp, owner: TestUser) => Promise<InjectOptions> | InjectOptions, ownedResource = false): SecurityCase => ({
  scope: 'read-only',
  auth: 'user',
  userOnly: true,
  ownedResource,
  prepare: async (t, owner) => {
    const request = await prepare(t, owner);
    return { ...request, headers: { ...(request.headers ?? {}), authorization: `Bearer ${owner.accessToken}` } };
  },
});

securitySuite('auth', getApp, {
  'GET /v1/auth/me': userRoute(() => ({ method: 'GET', url: '/v1/auth/me' })),
  'PATCH /v1/auth/me': userRoute(() => ({ method: 'PATCH', url: '/v1/auth/me', payload: { name: 'Mallory' } })),
  'POST /v1/auth/logout': userRoute(() => ({ method: 'POST', url: '/v1/auth/logout' })),
  'POST /v1/auth/password': userRoute((_t, owner) => ({
    method: 'POST',
    url: '/v1/auth/password',
    payload: { current_password: owner.password, new_password: 'a new password' },
  })),
  'POST /v1/auth/verify-email/resend': userRoute(() => ({ method: 'POST', url: '/v1/auth/verify-email/resend' })),
  'GET /v1/auth/sessions': userRoute(() => ({ method: 'GET', url: '/v1/auth/sessions' })),
  'DELETE /v1/auth/sessions/{id}': userRoute(async (t, owner) => ({ method: 'DELETE', url: `/v1/auth/sessions/${await sessionIdOf(t, owner)}` }), true),
});

describe('auth responses never carry a stored secret', async () => {
  const t = await getApp();

  it('no answer of any auth route contains a password hash or a token hash', async () => {
    const user = await signUp(t);
    const send = async (options: InjectOptions & { token?: string }) => {
      const res = await t.request(options);
      assertNoSecrets(res);
      return res;
    };
    const sessionId = await sessionIdOf(t, user);
    const answers = [
      await send({ method: 'POST', url: '/v1/auth/register', payload: { email: user.email, password: 'whatever1' } }),
      await send({ method: 'POST', url: '/v1/auth/login', payload: { email: user.email, password: 'wrong password' } }),
      await send({ method: 'GET', url: '/v1/auth/me', token: user.accessToken }),
      await send({ method: 'PATCH', url: '/v1/auth/me', token: user.accessToken, payload: { name: 'Eve' } }),
      await send({ method: 'GET', url: '/v1/auth/sessions', token: user.accessToken }),
      await send({ method: 'POST', url: '/v1/auth/verify-email/resend', token: user.accessToken }),
      await send({ method: 'POST', url: '/v1/auth/verify-email', payload: { token: 'ev_wrong' } }),
      await send({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email: user.email } }),
      await send({ method: 'POST', url: '/v1/auth/password/reset', payload: { token: 'pr_wrong', new_password: 'whatever1' } }),
      await send({ method: 'POST', url: '/v1/auth/password', token: user.accessToken, payload: { current_password: 'wrong', new_password: 'whatever1' } }),
      await send({ method: 'POST', url: '/v1/auth/refresh', payload: { refresh_token: user.refreshToken } }),
      await send({ method: 'POST', url: '/v1/auth/refresh', payload: { refresh_token: user.refreshToken } }),
    ];
    assert.deepEqual(answers.map((r) => r.statusCode), [409, 401, 200, 200, 200, 202, 422, 202, 422, 422, 200, 401]);
    const second = await signUp(t);
    const verify = await send({ method: 'POST', url: '/v1/auth/verify-email', payload: { token: mailedToken(t, second.email, 'verify_email') } });
    assert.equal(verify.statusCode, 200);
    assert.equal((await send({ method: 'DELETE', url: `/v1/auth/sessions/${sessionId}`, token: second.accessToken })).statusCode, 404);
    assert.equal((await send({ method: 'POST', url: '/v1/auth/logout', token: second.accessToken })).statusCode, 204);
  });
});
