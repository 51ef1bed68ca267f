import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, uniqueEmail } from '../../../test/support/fixtures.ts';
import { manualClock } from '../../platform/clock.ts';
import { sha256Hex } from '../../platform/secrets.ts';
import { assertNoSecrets, mailedToken, mailsTo } from './test-support.ts';

const paths = (res: { json(): { errors?: { path: string }[] } }) => (res.json().errors ?? []).map((e) => e.path).sort();

describe('account: me, password, reset, email verification', async () => {
  const clock = manualClock();
  const t = await buildTestApp({ clock });
  const userRow = (id: string) => t.platform.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const login = (email: string, password: string) => t.request({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });
  const me = (token: string) => t.request({ method: 'GET', url: '/v1/auth/me', token });
  const openSessions = async (userId: string) =>
    (await t.platform.db.selectFrom('sessions').select(['id', 'revoked_at', 'revoked_reason']).where('user_id', '=', userId).orderBy('id').execute());

  describe('GET and PATCH /v1/auth/me', () => {
    it('returns the caller without secrets', async () => {
      const user = await signUp(t, { name: 'Grace' });
      const res = await me(user.accessToken);
      assert.equal(res.statusCode, 200, res.body);
      assertNoSecrets(res);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['created_at', 'email', 'email_verified', 'id', 'name', 'updated_at']);
      assert.equal(body.id, user.id);
      assert.equal(body.email, user.email);
      assert.equal(body.name, 'Grace');
      assert.equal(body.email_verified, false);
    });

    it('changes and clears the name', async () => {
      const user = await signUp(t, { name: 'Old' });
      clock.advance(1000);
      const res = await t.request({ method: 'PATCH', url: '/v1/auth/me', token: user.accessToken, payload: { name: 'New Name' } });
      assert.equal(res.statusCode, 200, res.body);
      assertNoSecrets(res);
      assert.equal(res.json().name, 'New Name');
      const row = await userRow(user.id);
      assert.equal(row.name, 'New Name');
      assert.equal(row.updated_at.toISOString(), clock.now().toISOString());
      const cleared = await t.request({ method: 'PATCH', url: '/v1/auth/me', token: user.accessToken, payload: { name: null } });
      assert.equal(cleared.statusCode, 200, cleared.body);
      assert.equal((await userRow(user.id)).name, null);
      // An empty patch changes nothing.
      const noop = await t.request({ method: 'PATCH', url: '/v1/auth/me', token: user.accessToken, payload: {} });
      assert.equal(noop.statusCode, 200);
      assert.equal(noop.json().name, null);
    });

    it('changes the email with the current password: unverified again, a verification mail to the new address, a notice to the old', async () => {
      const user = await signUp(t);
      // Verify the first address, and leave a reset token outstanding for it.
      assert.equal((await t.request({ method: 'POST', url: '/v1/auth/verify-email', payload: { token: mailedToken(t, user.email, 'verify_email') } })).statusCode, 200);
      assert.equal((await t.request({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email: user.email } })).statusCode, 202);
      const oldResetToken = mailedToken(t, user.email, 'password_reset');

      const newEmail = uniqueEmail('moved');
      const res = await t.request({
        method: 'PATCH',
        url: '/v1/auth/me',
        token: user.accessToken,
        payload: { email: newEmail.toUpperCase(), current_password: user.password },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().email, newEmail);
      assert.equal(res.json().email_verified, false);
      const row = await userRow(user.id);
      assert.equal(row.email, newEmail);
      assert.equal(row.email_verified_at, null);
      assert.equal(mailsTo(t, user.email, 'email_changed').length, 1);
      assert.ok(mailsTo(t, user.email, 'email_changed')[0].text.includes(newEmail));

      // Tokens mailed to the old address are spent; the new verification mail works.
      const stale = await t.request({ method: 'POST', url: '/v1/auth/password/reset', payload: { token: oldResetToken, new_password: 'another password' } });
      assert.equal(stale.statusCode, 422, stale.body);
      const verified = await t.request({ method: 'POST', url: '/v1/auth/verify-email', payload: { token: mailedToken(t, newEmail, 'verify_email') } });
      assert.equal(verified.statusCode, 200, verified.body);
      assert.equal(verified.json().email_verified, true);
      // The new address logs in.
      assert.equal((await login(newEmail, user.password)).statusCode, 200);
      assert.equal((await login(user.email, user.password)).statusCode, 401);
    });

    it('refuses an email change without or with a wrong current password (422), or to a taken address (409)', async () => {
      const user = await signUp(t);
      const taken = await signUp(t);
      const patch = (payload: object) => t.request({ method: 'PATCH', url: '/v1/auth/me', token: user.accessToken, payload });
      const missing = await patch({ email: uniqueEmail() });
      assert.equal(missing.statusCode, 422, missing.body);
      assert.deepEqual(paths(missing), ['current_password']);
      const wrong = await patch({ email: uniqueEmail(), current_password: 'not my password' });
      assert.equal(wrong.statusCode, 422, wrong.body);
      assert.equal(wrong.json().code, 'validation_failed');
      assert.deepEqual(paths(wrong), ['current_password']);
      const conflict = await patch({ email: taken.email.toUpperCase(), current_password: user.password });
      assert.equal(conflict.statusCode, 409, conflict.body);
      assert.equal(conflict.json().code, 'conflict');
      assert.equal((await userRow(user.id)).email, user.email);
      // The same address (any case) is not a change and needs no password.
      const same = await patch({ email: user.email.toUpperCase(), name: 'Same' });
      assert.equal(same.statusCode, 200, same.body);
      assert.equal(same.json().email, user.email);
    });

    it('answers 422 naming bad and unknown fields', async () => {
      const user = await signUp(t);
      const res = await t.request({ method: 'PATCH', url: '/v1/auth/me', token: user.accessToken, payload: { name: '', email: 'nope', emali: 'x' } });
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual([...new Set(paths(res))], ['email', 'emali', 'name']);
    });
  });

  describe('POST /v1/auth/password', () => {
    it('changes the password and signs out the other sessions only', async () => {
      const user = await signUp(t);
      const other = await login(user.email, user.password);
      const res = await t.request({ method: 'POST', url: '/v1/auth/password', token: user.accessToken, payload: { current_password: user.password, new_password: 'a brand new password' } });
      assert.equal(res.statusCode, 204, res.body);
      assert.ok((await userRow(user.id)).password_hash.startsWith('$argon2id$'));
      assert.equal((await login(user.email, user.password)).statusCode, 401);
      const relogin = await login(user.email, 'a brand new password');
      assert.equal(relogin.statusCode, 200);

      assert.equal((await me(user.accessToken)).statusCode, 200, 'the current session stays');
      const gone = await me(other.json().access_token);
      assert.equal(gone.statusCode, 401);
      assert.equal(gone.json().code, 'invalid_token');
      assert.equal((await t.request({ method: 'POST', url: '/v1/auth/refresh', payload: { refresh_token: other.json().refresh_token } })).statusCode, 401);
      const reasons = (await openSessions(user.id)).map((s) => s.revoked_reason);
      assert.deepEqual(reasons, [null, 'password_changed', null]);
      assert.equal(mailsTo(t, user.email, 'password_changed').length, 1);
    });

    it('refuses a wrong current password with 422 on current_password, and a short new one', async () => {
      const user = await signUp(t);
      const wrong = await t.request({ method: 'POST', url: '/v1/auth/password', token: user.accessToken, payload: { current_password: 'wrong password', new_password: 'a brand new password' } });
      assert.equal(wrong.statusCode, 422, wrong.body);
      assert.deepEqual(paths(wrong), ['current_password']);
      assert.equal((await login(user.email, user.password)).statusCode, 200);
      const invalid = await t.request({ method: 'POST', url: '/v1/auth/password', token: user.accessToken, payload: { new_password: 'short', extra: true } });
      assert.equal(invalid.statusCode, 422, invalid.body);
      assert.deepEqual(paths(invalid), ['current_password', 'extra', 'new_password']);
    });
  });

  describe('forgot and reset password', () => {
    it('answers 202 for a known and an unknown address, and mails only the known one', async () => {
      const user = await signUp(t);
      const unknown = uniqueEmail('nobody');
      const known = await t.request({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email: user.email.toUpperCase() } });
      const missing = await t.request({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email: unknown } });
      assert.equal(known.statusCode, 202, known.body);
      assert.equal(missing.statusCode, 202, missing.body);
      assert.equal(known.body, missing.body);
      assert.match(known.json().message, /reset link/);
      assert.equal(mailsTo(t, unknown).length, 0);
      const token = mailedToken(t, user.email, 'password_reset');
      assert.match(token, /^pr_/);
      const row = await t.platform.db.selectFrom('email_tokens').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirstOrThrow();
      assert.equal(row.user_id, user.id);
      assert.equal(row.purpose, 'password_reset');
      assert.equal(row.expires_at.getTime() - row.created_at.getTime(), 3_600_000);
    });

    it('resets the password once with the mailed token and signs out every session', async () => {
      const user = await signUp(t);
      await t.request({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email: user.email } });
      const token = mailedToken(t, user.email, 'password_reset');
      const res = await t.request({ method: 'POST', url: '/v1/auth/password/reset', payload: { token, new_password: 'reset password 1' } });
      assert.equal(res.statusCode, 204, res.body);
      assert.equal((await login(user.email, user.password)).statusCode, 401);
      assert.equal((await login(user.email, 'reset password 1')).statusCode, 200);
      assert.equal((await me(user.accessToken)).statusCode, 401, 'the old session is signed out');
      const sessions = await openSessions(user.id);
      assert.equal(sessions[0].revoked_reason, 'password_reset');
      // The mailbox was proven, so the address counts as verified.
      assert.ok((await userRow(user.id)).email_verified_at);

      const again = await t.request({ method: 'POST', url: '/v1/auth/password/reset', payload: { token, new_password: 'reset password 2' } });
      assert.equal(again.statusCode, 422, again.body);
      assert.equal(again.json().code, 'validation_failed');
      assert.deepEqual(paths(again), ['token']);
      assert.equal((await login(user.email, 'reset password 1')).statusCode, 200);
    });

    it('refuses an expired token, a verification token and a malformed body with 422', async () => {
      const user = await signUp(t);
      await t.request({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email: user.email } });
      const token = mailedToken(t, user.email, 'password_reset');
      clock.advance(3_600_000 + 1000);
      const expired = await t.request({ method: 'POST', url: '/v1/auth/password/reset', payload: { token, new_password: 'reset password 1' } });
      assert.equal(expired.statusCode, 422, expired.body);
      assert.deepEqual(paths(expired), ['token']);
      const wrongPurpose = await t.request({ method: 'POST', url: '/v1/auth/password/reset', payload: { token: mailedToken(t, user.email, 'verify_email'), new_password: 'reset password 1' } });
      assert.equal(wrongPurpose.statusCode, 422);
      assert.equal((await login(user.email, user.password)).statusCode, 200);

      const bad = await t.request({ method: 'POST', url: '/v1/auth/password/reset', payload: { new_password: 'short' } });
      assert.equal(bad.statusCode, 422);
      assert.deepEqual(paths(bad), ['new_password', 'token']);
      const badForgot = await t.request({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email: 'not an email', x: 1 } });
      assert.equal(badForgot.statusCode, 422);
      assert.deepEqual(paths(badForgot), ['email', 'x']);
    });
  });

  describe('email verification', () => {
    it('verifies with the token mailed at registration, once', async () => {
      const user = await signUp(t);
      const token = mailedToken(t, user.email, 'verify_email');
      assert.match(token, /^ev_/);
      const stored = await t.platform.db.selectFrom('email_tokens').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirstOrThrow();
      assert.equal(stored.expires_at.getTime() - stored.created_at.getTime(), 7 * 86_400_000);
      const res = await t.request({ method: 'POST', url: '/v1/auth/verify-email', payload: { token } });
      assert.equal(res.statusCode, 200, res.body);
      assertNoSecrets(res);
      assert.equal(res.json().id, user.id);
      assert.equal(res.json().email_verified, true);
      assert.equal((await userRow(user.id)).email_verified_at?.toISOString(), clock.now().toISOString());
      const again = await t.request({ method: 'POST', url: '/v1/auth/verify-email', payload: { token } });
      assert.equal(again.statusCode, 422);
      assert.deepEqual(paths(again), ['token']);
      assert.equal((await me(user.accessToken)).json().email_verified, true);
    });

    it('refuses an expired or unknown token and a malformed body with 422', async () => {
      const user = await signUp(t);
      const token = mailedToken(t, user.email, 'verify_email');
      clock.advance(7 * 86_400_000 + 1000);
      const expired = await t.request({ method: 'POST', url: '/v1/auth/verify-email', payload: { token } });
      assert.equal(expired.statusCode, 422, expired.body);
      assert.deepEqual(paths(expired), ['token']);
      assert.equal((await userRow(user.id)).email_verified_at, null);
      const unknown = await t.request({ method: 'POST', url: '/v1/auth/verify-email', payload: { token: 'ev_unknown' } });
      assert.equal(unknown.statusCode, 422);
      const bad = await t.request({ method: 'POST', url: '/v1/auth/verify-email', payload: { tokn: 'x' } });
      assert.equal(bad.statusCode, 422);
      assert.deepEqual(paths(bad), ['token', 'tokn']);
    });

    it('resends a verification mail (202), and answers 409 once the address is verified', async () => {
      const user = await signUp(t);
      const res = await t.request({ method: 'POST', url: '/v1/auth/verify-email/resend', token: user.accessToken });
      assert.equal(res.statusCode, 202, res.body);
      const mails = mailsTo(t, user.email, 'verify_email');
      assert.equal(mails.length, 2);
      const resent = mails.map((m) => m.meta?.token).find((tk) => tk !== undefined && tk !== mails[0].meta?.token);
      assert.ok(resent);
      const verified = await t.request({ method: 'POST', url: '/v1/auth/verify-email', payload: { token: resent } });
      assert.equal(verified.statusCode, 200, verified.body);
      const again = await t.request({ method: 'POST', url: '/v1/auth/verify-email/resend', token: user.accessToken });
      assert.equal(again.statusCode, 409, again.body);
      assert.equal(again.json().code, 'conflict');
      assert.equal(mailsTo(t, user.email, 'verify_email').length, 2);
    });
  });
});
