import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeProtectedHeader, SignJWT } from 'jose';
import { createJwtSigner } from './jwt.ts';

// The access-token signer on its own (no app): the header it signs, and the claims it refuses,
// at the date the caller gives, whether or not it has verified the same token before.

const SECRET = 'a-test-secret-of-enough-length-0123456789';
const NOW = new Date('2026-11-23T10:00:00.000Z');
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
const isInvalidToken = (error: { code?: string }) => error.code === 'invalid_token';

/** An HS256 token with exactly these claims, signed with the signer's secret. */
function forge(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(SECRET));
}

describe('the access-token signer', () => {
  it('signs tokens with the header {alg: HS256, typ: JWT}', async () => {
    const token = await createJwtSigner(SECRET, 60).sign({ sub: 'usr_1', sid: 'ses_1' }, NOW);
    assert.deepEqual(decodeProtectedHeader(token), { alg: 'HS256', typ: 'JWT' });
  });

  it('refuses a token before its nbf, even one it accepted before (a clock set back)', async () => {
    const signer = createJwtSigner(SECRET, 60);
    const token = await forge({ sub: 'usr_1', sid: 'ses_1', nbf: seconds(NOW), exp: seconds(NOW) + 600 });
    assert.deepEqual(await signer.verify(token, NOW), { sub: 'usr_1', sid: 'ses_1' });
    await assert.rejects(signer.verify(token, new Date(NOW.getTime() - 1000)), isInvalidToken);
    assert.deepEqual(await signer.verify(token, NOW), { sub: 'usr_1', sid: 'ses_1' }, 'valid again from its nbf on');
  });

  it('refuses a token whose sub or sid is missing or not a string: invalid_token', async () => {
    const signer = createJwtSigner(SECRET, 60);
    const exp = seconds(NOW) + 600;
    for (const claims of [{ sid: 'ses_1' }, { sub: 'usr_1' }, { sub: 42, sid: 'ses_1' }, { sub: 'usr_1', sid: ['ses_1'] }]) {
      await assert.rejects(signer.verify(await forge({ ...claims, exp }), NOW), isInvalidToken, JSON.stringify(claims));
    }
  });
});
