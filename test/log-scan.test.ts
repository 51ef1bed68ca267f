import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateApiKey } from '../src/platform/auth/api-key-format.ts';
import { createJwtSigner } from '../src/platform/auth/jwt.ts';
import { hashPassword } from '../src/platform/auth/passwords.ts';
import { newWebhookSecret } from '../src/platform/outbox/signing.ts';
import { randomToken, sha256Hex } from '../src/platform/secrets.ts';
import { uniqueEmail } from './support/fixtures.ts';
import { findLogSecrets, LOGS_FILE, logFileName } from './support/log-scan.ts';

// The suite-wide log scan (test/support/log-scan.ts, run by test/log-secrets.check.ts) must flag
// what it is meant to flag, or the check after the suite proves nothing.

/** A log line as pino writes one, with `err` holding the given fields. */
const line = (err: Record<string, unknown>) => JSON.stringify({ level: 50, time: 1, pid: 1, reqId: 'req_0123456789abcdef0123', err, msg: 'unhandled error' });

describe('log scan', () => {
  it('flags each kind of secret, in a parameter list or anywhere in the line', async () => {
    const jwt = await createJwtSigner(randomToken('', 32), 3600).sign({ sub: 'usr_1', sid: 'ses_1' }, new Date());
    const cases: Array<[string, unknown]> = [
      ['argon2 hash', await hashPassword('some password')],
      ['webhook secret (whsec_)', newWebhookSecret()],
      ['API key (sk_)', generateApiKey().key],
      ['refresh token (rt_)', randomToken('rt_')],
      ['mailed token (ev_, pr_, iv_)', randomToken('pr_')],
      ['JWT', jwt],
      ['SHA-256 hash value', sha256Hex(generateApiKey().key)],
      ['fixture password', 'correct horse battery'],
      ['fixture email address', uniqueEmail()],
    ];
    for (const [what, secret] of cases) {
      assert.deepEqual(findLogSecrets(line({ query: 'insert into "x" values ($1, $2)', params: ['usr_1', secret] })), [what], what);
    }
    assert.deepEqual(findLogSecrets(line({ detail: `Key (key_hash)=(${sha256Hex('k')}) already exists.` })), ['SHA-256 hash value']);
    assert.deepEqual(findLogSecrets(`{"msg":"sent with Bearer ${jwt}"}`), ['JWT']);
  });

  it('passes ordinary log lines, including words close to the patterns', () => {
    for (const ordinary of [
      JSON.stringify({ level: 30, reqId: 'req_0123456789abcdef0123', req: { method: 'POST', url: '/v1/api-keys', remoteAddress: '127.0.0.1' }, msg: 'incoming request' }),
      JSON.stringify({ level: 30, res: { statusCode: 201 }, responseTime: 12.5, msg: 'request completed' }),
      JSON.stringify({ level: 30, req: { url: '/v1/invitations/[redacted]/accept' }, msg: 'incoming request' }),
      line({ code: '23505', detail: 'Key (key_hash)=(…)', query: 'insert into "api_keys" ("key_hash") values ($1)', message: 'duplicate key value violates unique constraint "api_keys_key_hash_key"' }),
      JSON.stringify({ id: 'key_01jdq3x4k5m6n7p8q9r0s1t2v3', prefix: 'sk_abcd', last4: 'wxyz', webhook_secret: '[redacted]', msg: 'rt_ and whsec_ prefixes' }),
      JSON.stringify({ msg: 'a password hash is never logged', etag: sha256Hex('body') }),
      '',
    ]) {
      assert.deepEqual(findLogSecrets(ordinary), [], ordinary);
    }
  });

  it('scans the very long lines hostile requests log (every pattern is linear in the line)', () => {
    const long = `${'x'.repeat(300_000)}${'%C3%A9'.repeat(50_000)}=(${'a'.repeat(100_000)}`;
    assert.deepEqual(findLogSecrets(JSON.stringify({ req: { url: `/v1/agents/${long}` }, msg: 'incoming request' })), []);
    assert.deepEqual(findLogSecrets(`${long} ${uniqueEmail()}`), ['fixture email address']);
  });

  it('names the per-process log files the check reads', () => {
    assert.ok(LOGS_FILE.test(logFileName(1234)));
    assert.ok(LOGS_FILE.test(logFileName(1234, 'server-3000')));
    for (const other of ['operations-1234.txt', 'leaks-1234.txt', 'logs-x.txt']) assert.ok(!LOGS_FILE.test(other), other);
  });
});
