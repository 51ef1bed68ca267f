import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeJwt, SignJWT } from 'jose';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { createJwtSigner } from './jwt.ts';

// Access tokens must carry `exp`: a token signed with the real secret but without one would
// otherwise never expire (a leaked token would work forever, whatever the session's fate).

/** An HS256 token with exactly these claims, signed with `secret`. */
function forge(secret: string, claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

describe('access token verification', async () => {
  const t = await buildTestApp();

  it('refuses a token signed with the real secret but without exp: 401 invalid_token', async () => {
    const user = await signUp(t);
    const { sub, sid } = decodeJwt(user.accessToken);
    const me = { method: 'GET' as const, url: '/v1/auth/me' };
    // The same claims with an exp are accepted: the token below differs only by the missing claim.
    const withExp = await forge(t.jwtSecret, { sub, sid, exp: Math.floor(Date.now() / 1000) + 600 });
    assert.equal((await t.request({ ...me, token: withExp })).statusCode, 200);

    const forever = await forge(t.jwtSecret, { sub, sid });
    const res = await t.request({ ...me, token: forever });
    assert.equal(res.statusCode, 401, res.body);
    assert.equal(res.json().code, 'invalid_token');
    assert.equal(res.json().detail, 'the access token is invalid');
    assert.equal(res.headers['www-authenticate'], 'Bearer error="invalid_token"');
  });

  it('an expired token: 401 token_expired, telling the client to refresh it, in the body and in WWW-Authenticate', async () => {
    const user = await signUp(t);
    const { sub, sid } = decodeJwt(user.accessToken);
    const expired = await forge(t.jwtSecret, { sub, sid, exp: Math.floor(Date.now() / 1000) - 1 });
    const res = await t.request({ method: 'GET', url: '/v1/auth/me', token: expired });
    assert.equal(res.statusCode, 401, res.body);
    assert.equal(res.json().code, 'token_expired');
    assert.equal(res.json().detail, 'the access token has expired; refresh it');
    assert.equal(res.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="token_expired"');
  });

  it('refuses a token whose exp is not a number', async () => {
    const user = await signUp(t);
    const { sub, sid } = decodeJwt(user.accessToken);
    const res = await t.request({ method: 'GET', url: '/v1/auth/me', token: await forge(t.jwtSecret, { sub, sid, exp: 'never' }) });
    assert.equal(res.statusCode, 401, res.body);
    assert.equal(res.json().code, 'invalid_token');
  });

  it('signs every token with exp = iat + the configured lifetime (unit)', async () => {
    const signer = createJwtSigner('a-test-secret-of-enough-length-0123456789', 3600);
    const now = new Date('2026-11-23T10:00:00.000Z');
    const token = await signer.sign({ sub: 'usr_1', sid: 'ses_1' }, now);
    const claims = decodeJwt(token);
    assert.deepEqual({ iat: claims.iat, exp: claims.exp }, { iat: now.getTime() / 1000, exp: now.getTime() / 1000 + 3600 });
    assert.deepEqual(await signer.verify(token, now), { sub: 'usr_1', sid: 'ses_1' });
    const bare = await forge('a-test-secret-of-enough-length-0123456789', { sub: 'usr_1', sid: 'ses_1' });
    await assert.rejects(signer.verify(bare, now), (error: { code?: string }) => error.code === 'invalid_token');
  });

  it('a token signed within a second lives at least the lifetime expires_in promises, not up to a second less (unit)', async () => {
    const signer = createJwtSigner('a-test-secret-of-enough-length-0123456789', 2);
    // 10:00:00.990: exp 10:00:03, not 10:00:02 (which would leave the client 1.01 s of the 2 it was told).
    const now = new Date('2026-11-23T10:00:00.990Z');
    const token = await signer.sign({ sub: 'usr_1', sid: 'ses_1' }, now);
    const claims = decodeJwt(token);
    assert.deepEqual({ iat: claims.iat, exp: claims.exp }, { iat: Math.floor(now.getTime() / 1000), exp: Math.ceil(now.getTime() / 1000) + 2 });
    assert.deepEqual(await signer.verify(token, new Date(now.getTime() + 2_000)), { sub: 'usr_1', sid: 'ses_1' });
    await assert.rejects(signer.verify(token, new Date('2026-11-23T10:00:03.000Z')), (error: { code?: string }) => error.code === 'token_expired');
  });

  it('a remembered token still expires at its exp, by the clock it is verified with (unit)', async () => {
    const signer = createJwtSigner('a-test-secret-of-enough-length-0123456789', 60);
    const now = new Date('2026-11-23T10:00:00.000Z');
    const token = await signer.sign({ sub: 'usr_1', sid: 'ses_1' }, now);
    assert.deepEqual(await signer.verify(token, now), { sub: 'usr_1', sid: 'ses_1' });
    // Remembered now: the same answer without checking the signature again, until exp.
    assert.deepEqual(await signer.verify(token, new Date(now.getTime() + 59_000)), { sub: 'usr_1', sid: 'ses_1' });
    await assert.rejects(signer.verify(token, new Date(now.getTime() + 60_000)), (error: { code?: string }) => error.code === 'token_expired');
    // Forgotten once expired: jose says so again.
    await assert.rejects(signer.verify(token, new Date(now.getTime() + 61_000)), (error: { code?: string }) => error.code === 'token_expired');
    // A token altered by one character is checked, not taken for the remembered one.
    const altered = `${token.slice(0, -2)}${token.at(-2) === 'A' ? 'B' : 'A'}${token.at(-1)}`;
    await assert.rejects(signer.verify(altered, now), (error: { code?: string }) => error.code === 'invalid_token');
  });
});
