import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import pino, { type DestinationStream } from 'pino';
import { buildTestApp } from '../../test/support/app.ts';
import { testDatabase } from '../../test/support/database.ts';
import { createApiKey, signUp, uniqueEmail } from '../../test/support/fixtures.ts';
import { findLogSecrets } from '../../test/support/log-scan.ts';
import { createApiKeysRepo } from '../modules/api-keys/repo.ts';
import { createWebhooksRepo } from '../modules/webhooks/repo.ts';
import { hashPassword } from './auth/passwords.ts';
import { createLogger, redactDatabaseText, redactSqlLiterals, resolveLogFormat, scrubSecretTokens, serializeError, withLogSerializers } from './logging.ts';
import { newWebhookSecret } from './outbox/signing.ts';
import { randomToken, sha256Hex } from './secrets.ts';

// Database errors carry their query's parameters and quote the offending row; the server's err
// serializer (platform/logging.ts) must write them without any value, whichever logger writes them.

function memoryLog(): { destination: DestinationStream; lines: string[]; find(msg: string): Record<string, unknown> } {
  const lines: string[] = [];
  return {
    lines,
    destination: { write: (line: string) => void lines.push(line) },
    find(msg) {
      const line = lines.find((l) => JSON.parse(l).msg === msg);
      assert.ok(line, `a log line "${msg}" in:\n${lines.join('')}`);
      return JSON.parse(line);
    },
  };
}

/** Runs a failing query and returns what it threw. */
async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  assert.fail('the query was expected to fail');
}

describe('database errors in the server log', async () => {
  const log = memoryLog();
  const secrets = { hash: await hashPassword('correct horse battery'), email: uniqueEmail('logged'), webhook: newWebhookSecret() };
  const t = await buildTestApp({
    logTo: log.destination,
    // A route whose query violates a constraint with secrets in its parameters, to reach the
    // error handler's 500 path with a real database error.
    instrument: (app) =>
      app.post('/test/failing-insert', async () => {
        const { db } = await testDatabase();
        const now = new Date();
        await db
          .insertInto('users')
          .values({ id: 'usr_failing', email: null as unknown as string, name: `${secrets.email} ${secrets.webhook}`, password_hash: secrets.hash, created_at: now, updated_at: now })
          .execute();
        return {};
      }),
  });

  it('logs a 500 caused by a not-null violation without parameters, row values or secrets', async () => {
    const res = await t.request({ method: 'POST', url: '/test/failing-insert' });
    assert.equal(res.statusCode, 500, res.body);
    const line = log.lines.find((l) => l.includes('"unhandled error"')) ?? '';
    const { err } = log.find('unhandled error') as { err: Record<string, unknown> };
    assert.equal(err.code, '23502');
    assert.equal(err.table, 'users');
    assert.equal(err.column, 'email');
    // PGlite attaches the query to its errors (with its parameters); pg does not.
    if (!process.env.TEST_DATABASE_URL) assert.match(String(err.query), /^insert into "users" \(.*\) values \(\$1, \$2/);
    assert.equal(err.detail, 'Failing row contains (…)');
    assert.equal('params' in err, false, 'no parameters');
    for (const secret of [secrets.hash, secrets.email, secrets.webhook, 'usr_failing']) {
      assert.ok(!line.includes(secret), `the line holds no parameter value (${secret.slice(0, 8)}…)`);
    }
    assert.deepEqual(findLogSecrets(line), []);
  });

  it("logs a repo's unique violation on an API-key hash without the hash", async () => {
    const owner = await signUp(t);
    const key = await createApiKey(t, owner, 'write');
    const keyHash = sha256Hex(key.key);
    const error = await failure(() =>
      createApiKeysRepo().insert(t.platform.db, { id: 'key_dup', workspaceId: owner.workspaceId, name: 'dup', scope: 'write', keyHash, prefix: 'sk_dup', last4: 'dupe', createdBy: owner.id, now: new Date() }),
    );
    t.platform.logger.error({ err: error }, 'duplicate key logged');
    const line = log.lines.find((l) => l.includes('"duplicate key logged"')) ?? '';
    const { err } = log.find('duplicate key logged') as { err: Record<string, unknown> };
    assert.equal(err.code, '23505');
    assert.equal(err.constraint, 'api_keys_key_hash_key');
    assert.equal(err.detail, 'Key (key_hash)=(…)');
    assert.ok(!line.includes(keyHash), 'no key hash');
    assert.ok(!line.includes(owner.workspaceId), 'no other parameter');
    assert.deepEqual(findLogSecrets(line), []);
  });

  it("logs a repo's foreign-key violation holding a webhook secret without it, through an outside logger too", async () => {
    const secret = newWebhookSecret();
    const error = await failure(() =>
      createWebhooksRepo().upsertEndpoint(t.platform.db, { workspaceId: 'ws_gone', url: 'https://example.net/hook', events: [], secret, now: new Date() }),
    );
    const outside = memoryLog();
    withLogSerializers(pino({}, outside.destination)).warn({ err: error }, 'fk logged');
    t.platform.logger.warn({ err: new Error('upsert failed', { cause: error }) }, 'wrapped logged');
    for (const [lines, msg] of [[outside.lines, 'fk logged'], [log.lines, 'wrapped logged']] as const) {
      const line = lines.find((l) => l.includes(`"${msg}"`)) ?? '';
      assert.ok(line, msg);
      assert.ok(!line.includes(secret) && !line.includes('ws_gone') && !line.includes('example.net'), `${msg}: no parameter value`);
      assert.match(line, /violates foreign key constraint/);
    }
    // Without the serializers the same error would leak: the check above proves something. (On
    // PostgreSQL, pg's errors carry no parameters; the constraint detail still quotes the key.)
    const raw = memoryLog();
    pino({}, raw.destination).warn({ err: error }, 'raw');
    assert.ok(raw.lines[0].includes(process.env.TEST_DATABASE_URL ? 'ws_gone' : secret));
  });
});

describe('error serializer (unit)', () => {
  it('blanks SQL literals but keeps identifiers and placeholders', () => {
    assert.equal(redactSqlLiterals(`select * from "users" where "email" = 'a@b.c' and x = $1 and y = E'it''s'`), `select * from "users" where "email" = '…' and x = $1 and y = E'…'`);
    assert.equal(redactSqlLiterals('select $$secret$$, $tag$more$tag$'), 'select $…$, $…$');
  });

  it('blanks the values PostgreSQL quotes in messages, details and contexts', () => {
    assert.equal(redactDatabaseText('Key (email)=(a@example.com) already exists.'), 'Key (email)=(…)');
    assert.equal(redactDatabaseText('Key (workspace_id)=(ws_1) is not present in table "workspaces".'), 'Key (workspace_id)=(…)');
    assert.equal(redactDatabaseText('Failing row contains (usr_1, null, $argon2id$v=19$x).'), 'Failing row contains (…)');
    assert.equal(redactDatabaseText("unnamed portal parameter $1 = 'hunter2'"), "unnamed portal parameter $1 = '…'");
    assert.equal(redactDatabaseText('invalid input syntax for type integer: "hunter2"', '22P02'), 'invalid input syntax for type integer: "…"');
    assert.equal(redactDatabaseText('JSON data, line 1: {"password": "x', '22P02'), 'JSON data, line 1: …');
    const constraint = 'duplicate key value violates unique constraint "users_email_key"';
    assert.equal(redactDatabaseText(constraint, '23505'), constraint, 'identifiers of non-data errors stay');
  });

  it('blanks token formats and secret-named fields anywhere in an error', () => {
    const key = `sk_${'A1'.repeat(23)}`;
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl';
    const refresh = randomToken('rt_');
    assert.equal(scrubSecretTokens(`key ${key}, token ${jwt}, refresh ${refresh}`), 'key [redacted], token [redacted], refresh [redacted]');
    const error = Object.assign(new Error(`request with Bearer ${jwt} failed`), {
      headers: { authorization: 'Basic dXNlcjpwYXNz', 'content-type': 'application/json' },
      config: { apiKey: 'plain-secret', url: 'https://api.example.net' },
      parameters: ['secret parameter'],
    });
    const serialized = JSON.stringify(serializeError(error));
    for (const leaked of [jwt, 'dXNlcjpwYXNz', 'plain-secret', 'secret parameter']) assert.ok(!serialized.includes(leaked), leaked);
    assert.match(serialized, /application\/json/);
    assert.match(serialized, /api\.example\.net/);
    assert.equal(serializeError('not an error'), 'not an error');
  });

  it('redacts database errors nested in an AggregateError', async () => {
    const { db } = await testDatabase();
    const error = await failure(() => db.selectFrom('users').select('id').where('created_at', '=', 'whsec_notatimestamp' as unknown as Date).execute());
    const serialized = JSON.stringify(serializeError(new AggregateError([error], 'several failed')));
    assert.ok(!serialized.includes('notatimestamp'), serialized);
    assert.match(serialized, /invalid input syntax for type timestamp with time zone/);
  });
});

describe('log format', () => {
  it('auto is pretty on a terminal and JSON otherwise', () => {
    assert.equal(resolveLogFormat('auto', true), 'pretty');
    assert.equal(resolveLogFormat('auto', false), 'json');
    assert.equal(resolveLogFormat('json', true), 'json');
    assert.equal(resolveLogFormat('pretty', false), 'pretty');
  });

  it('pretty lines put the level and message first, fields after, and still go through the serializers', async () => {
    let text = '';
    let resolve: () => void = () => undefined;
    const written = new Promise<void>((done) => {
      resolve = done;
    });
    const terminal = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        if (text.includes('\n')) resolve();
        done();
      },
    });
    const logger = createLogger({ level: 'info', format: 'pretty', destination: terminal });
    logger.info({ callId: 'call_1', err: { message: 'boom', params: ['secret-value'] } }, 'call ended');
    await written;
    assert.throws(() => JSON.parse(text), 'not JSON');
    assert.match(text, /INFO.*call ended/);
    assert.match(text, /callId: "call_1"/);
    assert.ok(!text.includes('secret-value'), 'the err serializer ran');
  });

  it('JSON by default', () => {
    const lines: string[] = [];
    createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } }).info({ callId: 'call_1' }, 'call ended');
    assert.equal(JSON.parse(lines[0]).msg, 'call ended');
  });
});
