import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateApiKey, isWellFormedApiKey, looksLikeApiKey } from '../src/platform/auth/api-key-format.ts';
import { manualClock } from '../src/platform/clock.ts';
import { newId } from '../src/platform/ids.ts';
import { sha256Hex } from '../src/platform/secrets.ts';
import { buildTestApp } from './support/app.ts';
import { createApiKey, signUp, type TestUser } from './support/fixtures.ts';

// API keys on the request path: the format and its checksum, and the usage bookkeeping
// (last_used_at / last_used_ip and the `api_key.used` audit row, at most once a minute per key).

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The key with the character at `index` replaced by another base62 character. */
function mistype(key: string, index: number): string {
  const replacement = BASE62[(BASE62.indexOf(key[index]) + 1 + (index % 61)) % 62];
  return key.slice(0, index) + replacement + key.slice(index + 1);
}

describe('API key format (unit)', () => {
  it('generates sk_ + 40 base62 + 6-char checksum keys, with their hash, prefix and last4', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { key, hash, prefix, last4 } = generateApiKey();
      assert.match(key, /^sk_[0-9A-Za-z]{46}$/);
      assert.ok(isWellFormedApiKey(key), key);
      assert.ok(looksLikeApiKey(key));
      assert.equal(hash, sha256Hex(key));
      assert.equal(prefix, key.slice(0, 7));
      assert.equal(last4, key.slice(-4));
      seen.add(key);
    }
    assert.equal(seen.size, 200, 'keys are random');
  });

  it('rejects every single-character typo, adjacent swaps and malformed shapes', () => {
    const { key } = generateApiKey();
    for (let index = 3; index < key.length; index++) {
      const typo = mistype(key, index);
      assert.notEqual(typo, key);
      assert.equal(isWellFormedApiKey(typo), false, `typo at ${index}: ${typo}`);
    }
    for (let index = 3; index < key.length - 1; index++) {
      if (key[index] === key[index + 1]) continue;
      const swapped = key.slice(0, index) + key[index + 1] + key[index] + key.slice(index + 2);
      assert.equal(isWellFormedApiKey(swapped), false, `swap at ${index}`);
    }
    for (const bad of ['', 'sk_', key.slice(0, -1), `${key}A`, `pk_${key.slice(3)}`, `${key.slice(0, 10)}-${key.slice(11)}`, ` ${key}`]) {
      assert.equal(isWellFormedApiKey(bad), false, JSON.stringify(bad));
    }
  });
});

describe('API keys on the request path', async () => {
  const clock = manualClock(new Date('2026-11-23T10:00:00.000Z'));
  const t = await buildTestApp({ clock });

  async function insertKeyRow(owner: TestUser, key: string) {
    const id = newId('key');
    await t.platform.db
      .insertInto('api_keys')
      .values({ id, workspace_id: owner.workspaceId, name: 'inserted', scope: 'admin', key_hash: sha256Hex(key), prefix: key.slice(0, 7), last4: key.slice(-4), created_by: owner.id, created_at: clock.now() })
      .execute();
    return id;
  }

  it('refuses a mistyped key on its checksum, before any lookup: even a stored hash of it does not authenticate', async () => {
    const owner = await signUp(t);
    // Control: a well-formed key whose hash is stored directly authenticates.
    const good = generateApiKey().key;
    await insertKeyRow(owner, good);
    const ok = await t.request({ method: 'GET', url: '/v1/audit-log', token: good });
    assert.equal(ok.statusCode, 200, ok.body);
    // The same row shape for a key with a broken checksum: a lookup would find it, so the 401
    // shows that the checksum refused the key before the database was asked.
    const typo = mistype(generateApiKey().key, 20);
    assert.equal(isWellFormedApiKey(typo), false);
    await insertKeyRow(owner, typo);
    const refused = await t.request({ method: 'GET', url: '/v1/audit-log', token: typo });
    assert.equal(refused.statusCode, 401, refused.body);
    assert.equal(refused.json().code, 'unauthorized');
    assert.match(String(refused.headers['www-authenticate']), /^Bearer/);
  });

  it('sets last_used_at and last_used_ip after a use', async () => {
    clock.set(new Date('2026-11-23T11:00:00.000Z'));
    const owner = await signUp(t);
    const key = await createApiKey(t, owner, 'admin');
    const res = await t.request({ method: 'GET', url: '/v1/audit-log', token: key.key, remoteAddress: '203.0.113.7' });
    assert.equal(res.statusCode, 200, res.body);
    await t.platform.keyUsage.flush();
    const read = await t.request({ method: 'GET', url: `/v1/api-keys/${key.id}`, token: owner.accessToken });
    assert.equal(read.json().last_used_at, '2026-11-23T11:00:00.000Z');
    assert.equal(read.json().last_used_ip, '203.0.113.7');
  });

  it('writes the api_key.used row and last_used_at at most once a minute per key, across instances', async () => {
    clock.set(new Date('2026-11-23T12:00:00.000Z'));
    const owner = await signUp(t);
    const key = await createApiKey(t, owner, 'admin', 'busy key');
    const other = await createApiKey(t, owner, 'admin', 'other key');
    const second = await buildTestApp({ clock }); // another instance on the same database
    const use = async (app = t, k = key.key) => {
      const res = await app.request({ method: 'GET', url: '/v1/audit-log', token: k });
      assert.equal(res.statusCode, 200, res.body);
      await app.platform.keyUsage.flush();
    };
    const usedRows = async (keyId = key.id) =>
      t.platform.db.selectFrom('audit_log').select(['created_at', 'actor_name', 'resource_id']).where('actor_id', '=', keyId).where('action', '=', 'api_key.used').orderBy('id').execute();
    const lastUsed = async () => (await t.platform.db.selectFrom('api_keys').select('last_used_at').where('id', '=', key.id).executeTakeFirstOrThrow()).last_used_at;

    await use();
    await use();
    await use();
    assert.equal((await usedRows()).length, 1, 'three uses in the same minute: one row');
    clock.advance(30_000);
    await use();
    await use(second); // a fresh instance has no memory of the key: the database condition holds the line
    assert.equal((await usedRows()).length, 1, 'still within the minute');
    assert.deepEqual(new Date(await lastUsed() as Date), new Date('2026-11-23T12:00:00.000Z'));
    await use(t, other.key);
    assert.equal((await usedRows(other.id)).length, 1, 'each key has its own minute');

    clock.advance(31_000);
    await use(second);
    const rows = await usedRows();
    assert.equal(rows.length, 2, 'a minute after the first row: a second one');
    assert.deepEqual(rows.map((r) => new Date(r.created_at).toISOString()), ['2026-11-23T12:00:00.000Z', '2026-11-23T12:01:01.000Z']);
    assert.ok(rows.every((r) => r.actor_name === 'busy key' && r.resource_id === key.id));
    assert.deepEqual(new Date(await lastUsed() as Date), new Date('2026-11-23T12:01:01.000Z'));
  });
});
