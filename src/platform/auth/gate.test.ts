import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { otherHandle, testDatabase, usingPostgres } from '../../../test/support/database.ts';
import { manualClock } from '../clock.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { createGate } from './gate.ts';
import { createGateCache, type KeyVerdict } from './gate-cache.ts';

// The gate as the platform holds it (gate.ts): its cache on the database's bus, the caches it
// carries on the same bus, when it may serve, and what closing it takes off the bus. On PGlite
// the gates of one process share the bus of their handle; on PostgreSQL `otherHandle()` is an
// instance of its own, with its own LISTEN connection.

const logger = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
const verdict: KeyVerdict = { id: 'key_gate_test', name: 'a key', workspaceId: 'ws_gate_test', scope: 'write' };
const HASH = 'hash-of-the-key';

function gateOn(t: TestContext, database: DatabaseHandle) {
  const gate = createGate({ database, clock: manualClock(), logger, ttlSeconds: 60 });
  t.after(() => gate.close());
  return gate;
}

describe('the gate', () => {
  it('serves the verdicts it keeps once ready() has resolved', async (t) => {
    const gate = gateOn(t, await otherHandle());
    await gate.ready();
    assert.equal(gate.serving, true);
    gate.cache.putKey(HASH, verdict, gate.cache.generation);
    assert.deepEqual(gate.cache.key(HASH), verdict);
  });

  it('carries another cache on its bus: the same publications clear it', async (t) => {
    const gate = gateOn(t, await otherHandle());
    await gate.ready();
    const endpoints = createGateCache({ ttlSeconds: 60, clock: manualClock(), trusted: () => gate.serving });
    assert.equal(gate.carry(endpoints), endpoints);
    endpoints.putKey(HASH, verdict, endpoints.generation);
    assert.deepEqual(endpoints.key(HASH), verdict);
    await gate.publish([{ kind: 'key', id: verdict.id }]);
    assert.equal(endpoints.key(HASH), undefined);
  });

  it('once closed, leaves the bus: the publications of a gate still open reach neither its cache nor the caches it carries', async (t) => {
    const database = await testDatabase();
    const closing = gateOn(t, database);
    const staying = gateOn(t, database);
    await Promise.all([closing.ready(), staying.ready()]);
    const carried = closing.carry(createGateCache({ ttlSeconds: 60, clock: manualClock() }));
    closing.cache.putKey(HASH, verdict, closing.cache.generation);
    carried.putKey(HASH, verdict, carried.generation);
    await closing.close();
    await staying.publish([{ kind: 'key', id: verdict.id }]);
    assert.deepEqual(carried.key(HASH), verdict, 'the carried cache no longer hears the bus');
    assert.deepEqual(closing.cache.key(HASH), verdict, "the closed gate's cache no longer hears the bus");
  });

  it('a gate closed twice leaves the bus once: a gate that joins afterwards shares the bus with the gates still open', async (t) => {
    const database = await testDatabase();
    const closing = gateOn(t, database);
    const staying = gateOn(t, database);
    await Promise.all([closing.ready(), staying.ready()]);
    await closing.close();
    await closing.close();
    const joining = gateOn(t, database);
    await joining.ready();
    staying.cache.putKey(HASH, verdict, staying.cache.generation);
    await joining.publish([{ kind: 'key', id: verdict.id }]);
    assert.equal(staying.cache.key(HASH), undefined, "the newcomer's publication reached the gate still open");
  });

  it('publishing no events leaves the lookups in flight free to store what they read', async (t) => {
    const gate = gateOn(t, await otherHandle());
    await gate.ready();
    const since = gate.cache.generation;
    await gate.publish([]);
    gate.cache.putKey(HASH, verdict, since);
    assert.deepEqual(gate.cache.key(HASH), verdict);
  });

  it('on PGlite, ready() does not wait: there is no LISTEN connection to wait for', { skip: usingPostgres() && 'PGlite only' }, async (t) => {
    const gate = gateOn(t, await otherHandle());
    let ready = false;
    void gate.ready().then(() => {
      ready = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(ready, true);
  });

  it('on PostgreSQL, serves nothing before its LISTEN connection is up, and serves once ready() has resolved', { skip: !usingPostgres() && 'PostgreSQL only (TEST_DATABASE_URL)' }, async (t) => {
    const gate = gateOn(t, await otherHandle());
    assert.equal(gate.serving, false);
    gate.cache.putKey(HASH, verdict, gate.cache.generation);
    assert.equal(gate.cache.key(HASH), undefined, 'not kept while it may not serve');
    await gate.ready();
    assert.equal(gate.serving, true);
  });
});
