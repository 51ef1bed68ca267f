import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { registerErrorHandling } from '../src/platform/http/error-handler.ts';
import { manualClock } from '../src/platform/clock.ts';
import { callerScope, canonicalJson, IN_FLIGHT_LEASE_MS, registerIdempotency } from '../src/platform/idempotency.ts';
import { buildTestApp } from './support/app.ts';
import { closeAtEnd } from './support/cleanup.ts';
import { signUp, type TestUser } from './support/fixtures.ts';

// Idempotency-Key (src/platform/idempotency.ts), exercised through POST /v1/api-keys: a create
// whose response carries a secret shown once.

describe('Idempotency-Key', async () => {
  const clock = manualClock(new Date('2026-11-23T10:00:00.000Z'));
  const t = await buildTestApp({ clock });
  const create = (user: TestUser, key: string | undefined, payload: object) =>
    t.request({
      method: 'POST',
      url: '/v1/api-keys',
      token: user.accessToken,
      workspaceId: user.workspaceId,
      headers: key === undefined ? {} : { 'idempotency-key': key },
      payload,
    });
  const keysOf = (user: TestUser) => t.platform.db.selectFrom('api_keys').select(['id', 'name']).where('workspace_id', '=', user.workspaceId).execute();

  it('replays the stored response for the same key and body, creating nothing new', async () => {
    const owner = await signUp(t);
    const key = randomUUID();
    const first = await create(owner, key, { name: 'deploy', scope: 'admin' });
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const second = await create(owner, key, { scope: 'admin', name: 'deploy' }); // same body, keys in another order
    assert.equal(second.statusCode, 201, second.body);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.headers['content-type'], first.headers['content-type']);
    assert.deepEqual(second.json(), first.json(), 'the same key id and secret');
    assert.deepEqual(await keysOf(owner), [{ id: first.json().id, name: 'deploy' }], 'one key in the database');
    const usable = await t.request({ method: 'GET', url: '/v1/audit-log', token: second.json().key });
    assert.equal(usable.statusCode, 200, 'the replayed key is the stored, working one');
  });

  it('refuses the same key with another body: 422 idempotency_key_reused, nothing created', async () => {
    const owner = await signUp(t);
    const key = randomUUID();
    assert.equal((await create(owner, key, { name: 'a', scope: 'write' })).statusCode, 201);
    const other = await create(owner, key, { name: 'b', scope: 'write' });
    assert.equal(other.statusCode, 422, other.body);
    assert.equal(other.json().code, 'idempotency_key_reused');
    assert.equal(other.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.deepEqual((await keysOf(owner)).map((k) => k.name), ['a']);
  });

  it("refuses the same key and body on another resource's path (422 idempotency_key_reused), never replaying the first resource's result", async () => {
    const owner = await signUp(t);
    const agent = async (name: string) => {
      const res = await t.request({ method: 'POST', url: '/v1/agents', token: owner.accessToken, workspaceId: owner.workspaceId, payload: { name } });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const [a, b] = [await agent('Alpha'), await agent('Beta')];
    const key = randomUUID();
    const duplicate = (id: string) =>
      t.request({ method: 'POST', url: `/v1/agents/${id}/duplicate`, token: owner.accessToken, workspaceId: owner.workspaceId, headers: { 'idempotency-key': key }, payload: {} });
    const first = await duplicate(a);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.json().name, 'Alpha (copy)');
    const other = await duplicate(b);
    assert.equal(other.statusCode, 422, other.body);
    assert.equal(other.json().code, 'idempotency_key_reused');
    assert.equal(other.headers['idempotent-replayed'], undefined);
    const again = await duplicate(a);
    assert.equal(again.headers['idempotent-replayed'], 'true', 'the same path still replays');
    assert.equal(again.json().id, first.json().id);
    const names = await t.platform.db.selectFrom('agents').select('name').where('workspace_id', '=', owner.workspaceId).orderBy('id').execute();
    assert.deepEqual(names.map((r) => r.name), ['Alpha', 'Beta', 'Alpha (copy)'], 'Beta was not copied, Alpha once');
  });

  it('answers 409 while the first request with the key is in flight, and frees a stale one', async () => {
    const owner = await signUp(t);
    const key = randomUUID();
    const scope = `usr:${owner.id}:${owner.workspaceId}`;
    const first = await create(owner, key, { name: 'x', scope: 'write' });
    assert.equal(first.statusCode, 201);
    // Turn the stored record back into an in-flight one with the same request hash.
    await t.platform.db.updateTable('idempotency_keys').set({ state: 'in_flight', response_body: null, response_status: null }).where('scope', '=', scope).execute();
    const inFlight = await create(owner, key, { name: 'x', scope: 'write' });
    assert.equal(inFlight.statusCode, 409, inFlight.body);
    assert.equal(inFlight.json().code, 'conflict');
    assert.equal((await keysOf(owner)).length, 1);

    clock.advance(IN_FLIGHT_LEASE_MS + 1000); // the instance that held it never answered
    const retried = await create(owner, key, { name: 'x', scope: 'write' });
    assert.equal(retried.statusCode, 201, retried.body);
    assert.equal(retried.headers['idempotent-replayed'], undefined, 'ran again');
    assert.equal((await keysOf(owner)).length, 2);
    clock.set(new Date('2026-11-23T10:00:00.000Z'));
  });

  it('keys are per caller: another user with the same key gets their own result', async () => {
    const alice = await signUp(t);
    const bob = await signUp(t);
    const key = 'shared-key-1';
    const a = await create(alice, key, { name: 'same', scope: 'write' });
    const b = await create(bob, key, { name: 'same', scope: 'write' });
    assert.equal(a.statusCode, 201);
    assert.equal(b.statusCode, 201);
    assert.equal(b.headers['idempotent-replayed'], undefined);
    assert.notEqual(a.json().id, b.json().id);
    assert.equal((await keysOf(alice)).length, 1);
    assert.equal((await keysOf(bob)).length, 1);
  });

  it('runs the request again after 24 hours', async () => {
    const owner = await signUp(t);
    const key = randomUUID();
    const relogin = async () => {
      const login = await t.request({ method: 'POST', url: '/v1/auth/login', payload: { email: owner.email, password: owner.password } });
      assert.equal(login.statusCode, 200, login.body);
      owner.accessToken = login.json().access_token; // the access token lives an hour
    };
    const first = await create(owner, key, { name: 'daily', scope: 'read-only' });
    clock.advance(23 * 3_600_000);
    await relogin();
    const replay = await create(owner, key, { name: 'daily', scope: 'read-only' });
    assert.equal(replay.statusCode, 201, replay.body);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().id, first.json().id);
    clock.advance(2 * 3_600_000);
    await relogin();
    const fresh = await create(owner, key, { name: 'daily', scope: 'read-only' });
    assert.equal(fresh.statusCode, 201, fresh.body);
    assert.equal(fresh.headers['idempotent-replayed'], undefined);
    assert.notEqual(fresh.json().id, first.json().id);
    assert.equal((await keysOf(owner)).length, 2);
    clock.set(new Date('2026-11-23T10:00:00.000Z'));
  });

  it('does not take the key for a request that fails validation', async () => {
    const owner = await signUp(t);
    const key = randomUUID();
    const invalid = await create(owner, key, { name: 'x', scope: 'nope' });
    assert.equal(invalid.statusCode, 422);
    assert.equal(invalid.json().code, 'validation_failed');
    const valid = await create(owner, key, { name: 'x', scope: 'write' });
    assert.equal(valid.statusCode, 201, 'the corrected request runs under the same key');
  });

  it('refuses a malformed Idempotency-Key with 422 naming the header', async () => {
    const owner = await signUp(t);
    for (const key of ['x'.repeat(256), 'with space', 'ünïcode']) {
      const res = await create(owner, key, { name: 'x', scope: 'write' });
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual(res.json().errors, [{ path: 'headers.idempotency-key', message: 'must be 1-255 visible ASCII characters' }]);
    }
    assert.equal((await keysOf(owner)).length, 0);
  });

  it('stores neither the Idempotency-Key nor the response secret in clear', async () => {
    const owner = await signUp(t);
    const key = `idem-${randomUUID()}`;
    const res = await create(owner, key, { name: 'secret holder', scope: 'admin' });
    const rows = await t.platform.db.selectFrom('idempotency_keys').selectAll().where('scope', 'like', `usr:${owner.id}:%`).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0].state, 'done');
    assert.equal(rows[0].response_status, 201);
    const stored = JSON.stringify(rows);
    assert.ok(!stored.includes(key), 'the Idempotency-Key is stored hashed');
    assert.ok(!stored.includes(res.json().key), 'the API key in the stored response is encrypted');
    assert.ok(!stored.includes(res.json().id), 'the stored body is not readable');
  });
});

describe('Idempotency-Key on a probe app (real hooks and database)', async () => {
  const t = await buildTestApp();
  const probe = Fastify({ logger: false });
  registerErrorHandling(probe);
  probe.decorateRequest('principal', null);
  probe.decorateRequest('workspace', null);
  registerIdempotency(probe, t.platform);
  let flakyCalls = 0;
  probe.post('/v1/probe/flaky', async (_request, reply) => {
    flakyCalls += 1;
    if (flakyCalls === 1) throw new Error('the first attempt fails');
    return reply.code(201).send({ attempt: flakyCalls });
  });
  const bytes = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x41, 0xc3, 0x28]); // not valid UTF-8
  probe.post('/v1/probe/binary', async (_request, reply) => reply.type('application/octet-stream').send(bytes));
  await probe.ready();
  closeAtEnd(() => probe.close());
  const post = (url: string, key: string, ip: string) =>
    probe.inject({ method: 'POST', url, headers: { 'idempotency-key': key, 'content-type': 'application/json' }, payload: '{}', remoteAddress: ip });

  it('a 5xx frees the key: the retry runs, and is then replayed', async () => {
    const key = randomUUID();
    const failed = await post('/v1/probe/flaky', key, '192.0.2.10');
    assert.equal(failed.statusCode, 500);
    assert.equal(failed.json().code, 'internal');
    const retried = await post('/v1/probe/flaky', key, '192.0.2.10');
    assert.equal(retried.statusCode, 201, retried.body);
    assert.deepEqual(retried.json(), { attempt: 2 });
    const replayed = await post('/v1/probe/flaky', key, '192.0.2.10');
    assert.equal(replayed.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replayed.json(), { attempt: 2 });
    assert.equal(flakyCalls, 2);
  });

  it('replays a binary body byte for byte, with its content type', async () => {
    const key = randomUUID();
    const first = await post('/v1/probe/binary', key, '192.0.2.11');
    assert.deepEqual(first.rawPayload, bytes);
    const replayed = await post('/v1/probe/binary', key, '192.0.2.11');
    assert.equal(replayed.headers['idempotent-replayed'], 'true');
    assert.equal(replayed.headers['content-type'], 'application/octet-stream');
    assert.deepEqual(replayed.rawPayload, bytes);
  });

  it('public callers are scoped by IP', async () => {
    const key = randomUUID();
    await post('/v1/probe/binary', key, '192.0.2.12');
    const elsewhere = await post('/v1/probe/binary', key, '192.0.2.13');
    assert.equal(elsewhere.headers['idempotent-replayed'], undefined);
  });
});

describe('Idempotency helpers (unit)', () => {
  it('canonicalJson ignores key order but not values', () => {
    assert.equal(canonicalJson({ b: 1, a: [{ d: 2, c: null }] }), canonicalJson({ a: [{ c: null, d: 2 }], b: 1 }));
    assert.notEqual(canonicalJson({ a: 1 }), canonicalJson({ a: '1' }));
    assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
    assert.equal(canonicalJson(undefined), 'null');
  });

  it('scopes keys by API key, by user and workspace, or by IP', () => {
    const base = { ip: '198.51.100.1', workspace: null, principal: null };
    assert.equal(callerScope(base as never), 'ip:198.51.100.1');
    assert.equal(callerScope({ ...base, principal: { type: 'api_key', keyId: 'key_1' } } as never), 'key:key_1');
    assert.equal(callerScope({ ...base, principal: { type: 'user', userId: 'usr_1' }, workspace: { workspaceId: 'ws_1' } } as never), 'usr:usr_1:ws_1');
  });
});
