import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Fastify from 'fastify';
import { hashPassword } from '../src/platform/auth/passwords.ts';
import { findLeaks, instrumentApp, LEAKS_FILE, OPERATIONS_FILE } from './support/coverage.ts';

// The suite-wide leak scan (test/support/coverage.ts) must flag what it is meant to flag, or the
// check after the suite proves nothing.

describe('leak scan', () => {
  it('flags hash fields, argon2 hashes and stack traces, raw or JSON-escaped', async () => {
    const argon = await hashPassword('correct horse battery');
    assert.match(argon, /^\$argon2id\$/);
    assert.deepEqual(findLeaks(JSON.stringify({ id: 'usr_1', hash: argon })), ['argon2 hash']);
    assert.deepEqual(findLeaks(JSON.stringify({ id: 'usr_1', password_hash: 'x' })), ['password_hash field']);
    assert.deepEqual(findLeaks(JSON.stringify({ key_hash: 'ab' })), ['key_hash field']);
    assert.deepEqual(findLeaks(JSON.stringify({ token_hash: 'ab' })), ['token_hash field']);
    assert.deepEqual(findLeaks(JSON.stringify({ refresh_token_hash: 'ab' })), ['refresh_token_hash field']);
    const stack = new Error('boom').stack ?? '';
    assert.deepEqual(findLeaks(stack), ['stack trace']);
    assert.deepEqual(findLeaks(JSON.stringify({ detail: stack })), ['stack trace']);
  });

  it('passes ordinary bodies, including words close to the patterns', () => {
    for (const body of [
      JSON.stringify({ id: 'key_1', prefix: 'sk_abcd', last4: 'wxyz', hash_algorithm: 'sha256', password: null }),
      JSON.stringify({ detail: 'the password hash is never shown', note: 'look at the docs' }),
      'plain text\nwith lines\n  at the start of a line',
      '',
    ]) {
      assert.deepEqual(findLeaks(body), [], body);
    }
  });

  it("records a leaking response of an instrumented app in leaks-<pid>.txt, and operations apart", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-leaks-'));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const app = Fastify({ logger: false });
    instrumentApp(app, dir);
    app.get('/v1/leaky', async () => ({ user: 'usr_1', secret: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA' }));
    app.get('/v1/clean', async () => ({ ok: true }));
    await app.ready();
    assert.equal((await app.inject({ method: 'GET', url: '/v1/clean' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/v1/leaky?x=1' })).statusCode, 200);
    await app.close();

    const files = fs.readdirSync(dir).sort();
    assert.deepEqual(files, [`leaks-${process.pid}.txt`, `operations-${process.pid}.txt`]);
    assert.ok(LEAKS_FILE.test(files[0]) && !OPERATIONS_FILE.test(files[0]), 'the coverage check tells the files apart');
    const leaks = fs.readFileSync(path.join(dir, files[0]), 'utf8');
    assert.equal(leaks, 'GET /v1/leaky -> 200: argon2 hash\n');
    assert.ok(!leaks.includes('$argon2'), 'the record names the finding, not the secret');
  });
});
