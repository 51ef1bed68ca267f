import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testDatabase } from '../../../test/support/database.ts';
import { insertApiKey, insertSession, insertUser, insertWorkspace } from '../../../test/support/rows.ts';
import { createAuditWriter } from '../audit.ts';
import { manualClock } from '../clock.ts';
import type { Database } from '../db/schema.ts';
import { newId } from '../ids.ts';
import { createApiKeyUsageRecorder, type KeyUse } from './api-key-usage.ts';

// The bookkeeping of credential use (api-key-usage.ts), with a real database and audit writer and
// a manual clock: an API key's last_used_at/last_used_ip and its `api_key.used` audit row at most
// once a minute, across instances too (the UPDATE's own condition), a session's last_used_at at
// most once a minute, failures handed to onError, and flush() waiting for the writes in flight.

const { db } = await testDatabase();

async function keyIn(database: Database, clock: ReturnType<typeof manualClock>) {
  const workspaceId = await insertWorkspace(database, clock.now(), { name: 'usage' });
  const { id } = await insertApiKey(database, workspaceId, 'write', clock.now(), { name: 'usage key' });
  const use: KeyUse = { keyId: id, keyName: 'usage key', workspaceId, ip: '192.0.2.7', userAgent: 'usage-test/1', requestId: 'req-42' };
  return use;
}

function recorder(clock = manualClock()) {
  const errors: unknown[] = [];
  const usage = createApiKeyUsageRecorder({ db, clock, audit: createAuditWriter({ db, clock }), onError: (error) => errors.push(error) });
  return { clock, usage, errors };
}

const usedRows = (keyId: string) => db.selectFrom('audit_log').selectAll().where('actor_id', '=', keyId).where('action', '=', 'api_key.used').orderBy('created_at').execute();
const keyRow = (keyId: string) => db.selectFrom('api_keys').select(['last_used_at', 'last_used_ip']).where('id', '=', keyId).executeTakeFirstOrThrow();
const ms = (value: Date | string | null) => (value === null ? null : new Date(value).getTime());

describe('an API key use', () => {
  it('writes last_used_at, last_used_ip and one api_key.used audit row, every field', async () => {
    const { clock, usage, errors } = recorder();
    const use = await keyIn(db, clock);
    usage.noteUse(use);
    await usage.flush();
    const row = await keyRow(use.keyId);
    assert.deepEqual({ at: ms(row.last_used_at), ip: row.last_used_ip }, { at: clock.now().getTime(), ip: '192.0.2.7' });
    const [audit, ...more] = await usedRows(use.keyId);
    assert.equal(more.length, 0);
    assert.deepEqual(
      { ...audit, id: audit.id.startsWith('aud_'), created_at: ms(audit.created_at) },
      {
        id: true,
        workspace_id: use.workspaceId,
        actor_type: 'api_key',
        actor_id: use.keyId,
        actor_name: 'usage key',
        action: 'api_key.used',
        method: '-',
        route: '-',
        resource_id: use.keyId,
        status_code: 0,
        ip: '192.0.2.7',
        user_agent: 'usage-test/1',
        request_id: 'req-42',
        created_at: clock.now().getTime(),
      },
    );
    assert.deepEqual(errors, []);
  });

  it('at most once a minute: not 59 999 ms nor 60 000 ms after the last write (the stored time must be older than a minute), at 60 001 ms', async () => {
    const { clock, usage } = recorder();
    const use = await keyIn(db, clock);
    const first = clock.now().getTime();
    usage.noteUse(use);
    await usage.flush();
    for (const after of [59_999, 60_000]) {
      clock.set(new Date(first + after));
      usage.noteUse({ ...use, ip: '192.0.2.8' });
      await usage.flush();
      assert.equal((await usedRows(use.keyId)).length, 1, `${after} ms after`);
      assert.deepEqual(await keyRow(use.keyId), { last_used_at: new Date(first), last_used_ip: '192.0.2.7' });
    }
    clock.set(new Date(first + 60_001));
    usage.noteUse({ ...use, ip: '192.0.2.9' });
    await usage.flush();
    assert.equal((await usedRows(use.keyId)).length, 2);
    assert.deepEqual(await keyRow(use.keyId), { last_used_at: new Date(first + 60_001), last_used_ip: '192.0.2.9' });
  });

  it("another instance's write within the minute: this one skips, and counts its minute from that write", async () => {
    const clock = manualClock();
    const one = recorder(clock);
    const two = recorder(clock);
    const use = await keyIn(db, clock);
    const first = clock.now().getTime();
    one.usage.noteUse(use);
    await one.usage.flush();
    clock.set(new Date(first + 30_000));
    two.usage.noteUse(use);
    await two.usage.flush();
    assert.equal((await usedRows(use.keyId)).length, 1, 'the second instance skipped');
    // A minute after the first instance's write (not after the second's attempt): written.
    clock.set(new Date(first + 60_001));
    two.usage.noteUse(use);
    await two.usage.flush();
    assert.equal((await usedRows(use.keyId)).length, 2, "counted from the other instance's write");
    assert.deepEqual([one.errors, two.errors], [[], []]);
  });

  it('a key gone meanwhile (no row): nothing written, no error', async () => {
    const { usage, errors } = recorder();
    usage.noteUse({ keyId: newId('key'), keyName: 'gone', workspaceId: newId('ws'), ip: '192.0.2.1', userAgent: null, requestId: 'req-1' });
    await usage.flush();
    assert.deepEqual(errors, []);
  });
});

describe('a session use', () => {
  async function sessionIn(clock: ReturnType<typeof manualClock>, lastUsedAt: Date) {
    const user = await insertUser(db, clock.now());
    return insertSession(db, user.id, lastUsedAt, { expiresAt: new Date(clock.now().getTime() + 86_400_000) });
  }
  const lastUsed = async (id: string) => ms((await db.selectFrom('sessions').select('last_used_at').where('id', '=', id).executeTakeFirstOrThrow()).last_used_at);

  it('writes last_used_at only when the stored one is older than a minute (not a minute old exactly)', async () => {
    const { clock, usage } = recorder();
    const login = clock.now().getTime();
    const id = await sessionIn(clock, new Date(login));
    const other = await sessionIn(clock, new Date(login - 3_600_000));
    const bystander = await sessionIn(clock, new Date(login - 3_600_000));
    clock.set(new Date(login + 60_000));
    usage.noteSession(id);
    await usage.flush();
    assert.equal(await lastUsed(id), login, 'a minute old exactly: kept');
    usage.noteSession(other);
    await usage.flush();
    assert.equal(await lastUsed(other), login + 60_000);
    assert.equal(await lastUsed(bystander), login - 3_600_000, 'only the session named');
  });

  it('at most once a minute per session in this instance, even when the stored time would allow a write: 59 999 ms no, 60 000 ms yes', async () => {
    const { clock, usage } = recorder();
    const login = clock.now().getTime();
    const id = await sessionIn(clock, new Date(login));
    // 10 s after login: the stored time is too recent, nothing written, but this instance's minute starts.
    clock.set(new Date(login + 10_000));
    usage.noteSession(id);
    await usage.flush();
    assert.equal(await lastUsed(id), login);
    clock.set(new Date(login + 10_000 + 59_999));
    usage.noteSession(id);
    await usage.flush();
    assert.equal(await lastUsed(id), login, '59 999 ms after: not due in this instance');
    clock.set(new Date(login + 10_000 + 60_000));
    usage.noteSession(id);
    await usage.flush();
    assert.equal(await lastUsed(id), login + 70_000, '60 000 ms after: due');
  });
});

describe('failures and flush', () => {
  it('a failing write goes to onError; without onError it is dropped and flush() still resolves', async () => {
    const { usage, errors } = recorder();
    // PostgreSQL refuses U+0000 in text: the UPDATE itself fails.
    usage.noteSession('ses_\u0000');
    await usage.flush();
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof Error);
    const clock = manualClock();
    const bare = createApiKeyUsageRecorder({ db, clock, audit: createAuditWriter({ db, clock }) });
    bare.noteSession('ses_\u0000');
    await bare.flush();
  });

  it('flush() waits for the writes in flight, the audit row included', async () => {
    const { clock, usage } = recorder();
    const use = await keyIn(db, clock);
    usage.noteUse(use);
    await usage.flush();
    assert.equal((await usedRows(use.keyId)).length, 1);
  });
});
