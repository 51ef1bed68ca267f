import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, uniqueEmail } from '../../../test/support/fixtures.ts';

describe('register and login', async () => {
  const t = await buildTestApp();

  it('registers a user with a personal workspace and the signup credit as a ledger row', async () => {
    const email = uniqueEmail('Reg').replace('reg', 'Reg');
    const res = await t.request({ method: 'POST', url: '/v1/auth/register', payload: { email, password: 'longenough', name: 'Ada' } });
    assert.equal(res.statusCode, 201, res.body);
    const user = res.json();
    assert.match(user.id, /^usr_[0-9a-z]{26}$/);
    assert.equal(user.email, email.toLowerCase());
    assert.equal(user.email_verified, false);
    assert.equal('password_hash' in user, false);
    const membership = await t.platform.db.selectFrom('memberships').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(membership.role, 'owner');
    const ledger = await t.platform.db.selectFrom('wallet_transactions').selectAll().where('workspace_id', '=', membership.workspace_id).execute();
    assert.deepEqual(ledger.map((r) => [r.type, r.amount_micros, r.balance_after_micros]), [['adjustment', 10_000_000, 10_000_000]]);
    const wallet = await t.platform.db.selectFrom('wallets').selectAll().where('workspace_id', '=', membership.workspace_id).executeTakeFirstOrThrow();
    assert.equal(wallet.balance_micros, 10_000_000);
  });

  it('refuses a duplicate email, case-insensitively, with 409', async () => {
    const email = uniqueEmail();
    await t.request({ method: 'POST', url: '/v1/auth/register', payload: { email, password: 'longenough' } });
    const again = await t.request({ method: 'POST', url: '/v1/auth/register', payload: { email: email.toUpperCase(), password: 'longenough' } });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'conflict');
    assert.equal(again.headers['content-type'], 'application/problem+json; charset=utf-8');
  });

  it('answers 422 naming each bad field, including unknown ones', async () => {
    const res = await t.request({ method: 'POST', url: '/v1/auth/register', payload: { email: 'not-an-email', password: 'short', nmae: 'typo' } });
    assert.equal(res.statusCode, 422);
    const body = res.json();
    assert.equal(body.code, 'validation_failed');
    const paths = body.errors.map((e: { path: string }) => e.path).sort();
    assert.deepEqual(paths, ['email', 'nmae', 'password']);
  });

  it('logs in and gives the same 401 for unknown email and wrong password', async () => {
    const user = await signUp(t);
    assert.match(user.refreshToken, /^rt_/);
    const wrong = await t.request({ method: 'POST', url: '/v1/auth/login', payload: { email: user.email, password: 'wrong password' } });
    const unknown = await t.request({ method: 'POST', url: '/v1/auth/login', payload: { email: uniqueEmail(), password: 'wrong password' } });
    assert.equal(wrong.statusCode, 401);
    assert.equal(unknown.statusCode, 401);
    assert.equal(wrong.json().detail, unknown.json().detail);
  });

  it('answers 400 invalid_json for a malformed body and 415 for a wrong content type', async () => {
    const bad = await t.request({ method: 'POST', url: '/v1/auth/login', payload: '{"email":', headers: { 'content-type': 'application/json' } });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'invalid_json');
    const xml = await t.request({ method: 'POST', url: '/v1/auth/login', payload: '<x/>', headers: { 'content-type': 'application/xml' } });
    assert.equal(xml.statusCode, 415);
    assert.equal(xml.json().code, 'unsupported_media_type');
  });
});
