import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type KyselyPlugin, sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { otherHandle, usingPostgres } from '../../../test/support/database.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { until } from '../../../test/support/processes.ts';
import { createCallJournal } from '../../modules/calls/journal.ts';
import { type Receiver, startReceiver } from '../../modules/webhooks/test-receiver.ts';
import { createWebhookWorker } from '../../modules/webhooks/worker.ts';
import { manualClock } from '../clock.ts';
import { newId } from '../ids.ts';
import { createTenantEndpointCache } from './tenant-endpoint-cache.ts';

// The tenant webhook endpoint cache (tenant-endpoint-cache.ts) on the transcript path: a call's
// transcript lines cost no query once the workspace's endpoint (usually none) is known, and every
// change of the endpoint, through this instance or another one, reaches the very next line. On
// PostgreSQL the second instance has a handle of its own, so the change reaches it through NOTIFY.

const receivers: Receiver[] = [];
after(async () => {
  for (const r of receivers) await r.close();
});

/** The call journal of `t` on a handle that counts the statements it runs (a Kysely plugin). */
function countedJournal(t: TestApp) {
  let statements = 0;
  const counter: KyselyPlugin = {
    transformQuery: (args) => {
      statements++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const journal = createCallJournal({
    db: t.platform.db.withPlugin(counter),
    database: t.platform.database,
    clock: t.platform.clock,
    events: t.platform.events,
    links: { recordingUrl: (id) => `/recordings/${id}`, transcriptUrl: (id) => `/transcripts/${id}` },
    rates: { callPerMinMicros: 0, webVoicePerMinMicros: 0 },
  });
  return { journal, statements: () => statements };
}

/** A live call's transcript, one line at a time, as the runner's observer sends them. */
function liveCall(t: TestApp, workspaceId: string) {
  const counted = countedJournal(t);
  const call = { id: newId('call'), workspace_id: workspaceId, agent_id: newId('agent'), direction: 'web', from_number: null, to_number: null };
  let turn = 0;
  return {
    callId: call.id,
    /** Sends one line; answers how many statements it ran. */
    async say(text: string): Promise<number> {
      const before = counted.statements();
      turn++;
      await counted.journal.transcript(call, null, { role: 'user', text, start_ms: turn * 1000, end_ms: turn * 1000 + 500 }, turn);
      return counted.statements() - before;
    },
  };
}

/** The call's transcript lines written for the tenant webhook, oldest first. */
async function tenantLines(t: TestApp, callId: string): Promise<string[]> {
  const rows = await t.platform.db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
    .select('webhook_events.payload')
    .where('webhook_events.call_id', '=', callId)
    .where('webhook_deliveries.destination', '=', 'tenant')
    .orderBy('webhook_events.id')
    .execute();
  return rows.map((r) => JSON.parse(r.payload).data.text);
}

async function putWebhook(t: TestApp, user: TestUser, url: string, events: string[], workspaceId?: string) {
  const res = await t.request({ method: 'PUT', url: '/v1/webhooks', token: user.accessToken, workspaceId, payload: { webhook_url: url, events } });
  assert.equal(res.statusCode, 200, res.body);
}

async function deleteWebhook(t: TestApp, user: TestUser) {
  const res = await t.request({ method: 'DELETE', url: '/v1/webhooks', token: user.accessToken });
  assert.equal(res.statusCode, 204, res.body);
}

describe('the tenant endpoint cache on the transcript path', async () => {
  const a = await buildTestApp();
  const b = await buildTestApp({ database: await otherHandle(), jwtSecret: a.jwtSecret });

  it('a workspace without a webhook costs one query for the first line and none after; a webhook set afterwards gets the next line, until its events or its deletion stop them', async () => {
    const owner = await signUp(a);
    const call = liveCall(a, owner.workspaceId);
    assert.equal(await call.say('one'), 1, 'the first line reads the endpoint');
    assert.equal(await call.say('two'), 0);
    assert.equal(await call.say('three'), 0);
    assert.equal(a.platform.tenantEndpoints.peek(owner.workspaceId), null, '"no webhook" is what is kept');

    const hook = await startReceiver();
    receivers.push(hook);
    await putWebhook(a, owner, hook.url, ['call.transcript']);
    await call.say('four');
    assert.deepEqual(await tenantLines(a, call.callId), ['four'], 'the next line, without waiting for the TTL');
    const p = a.platform;
    const worker = createWebhookWorker({ database: p.database, clock: p.clock, webhooks: p.config.webhooks, outbound: p.outbound, logger: p.logger, wake: p.events.wake });
    await worker.runDueOnce();
    await hook.waitFor(1);
    assert.equal(JSON.parse(hook.received[0].body).data.text, 'four');

    await putWebhook(a, owner, hook.url, ['call.ended']);
    await call.say('five');
    assert.equal(await call.say('six'), 0, 'the new events are cached again');
    assert.deepEqual(await tenantLines(a, call.callId), ['four'], 'call.transcript is no longer subscribed');

    await putWebhook(a, owner, hook.url, ['call.transcript']);
    await call.say('seven');
    await deleteWebhook(a, owner);
    await call.say('eight');
    assert.deepEqual(await tenantLines(a, call.callId), ['four', 'seven'], 'nothing after the deletion');
  });

  it('a change through one instance is what the other instance routes the next line by', async () => {
    const owner = await signUp(a);
    const call = liveCall(b, owner.workspaceId);
    assert.equal(await call.say('one'), 1);
    assert.equal(await call.say('two'), 0, 'instance b keeps "no webhook"');

    await putWebhook(a, owner, 'http://127.0.0.1:9/hook', ['call.transcript']);
    await call.say('three');
    assert.deepEqual(await tenantLines(a, call.callId), ['three']);
    assert.deepEqual(b.platform.tenantEndpoints.peek(owner.workspaceId), { url: 'http://127.0.0.1:9/hook', events: ['call.transcript'] });

    await putWebhook(a, owner, 'http://127.0.0.1:9/other', ['call.transcript', 'call.ended']);
    await call.say('four');
    assert.deepEqual(b.platform.tenantEndpoints.peek(owner.workspaceId)?.url, 'http://127.0.0.1:9/other');

    await putWebhook(a, owner, 'http://127.0.0.1:9/other', ['call.ended']);
    await call.say('five');
    await putWebhook(a, owner, 'http://127.0.0.1:9/other', ['call.transcript']);
    await call.say('six');
    await deleteWebhook(a, owner);
    await call.say('seven');
    assert.deepEqual(await tenantLines(a, call.callId), ['three', 'four', 'six']);
    assert.equal(b.platform.tenantEndpoints.peek(owner.workspaceId), null);
  });

  it('a rotated secret keeps the entry (only URL and events are kept); a deleted workspace drops it on both instances', async () => {
    const owner = await signUp(a);
    const created = await a.request({ method: 'POST', url: '/v1/workspaces', token: owner.accessToken, payload: { name: 'doomed' } });
    assert.equal(created.statusCode, 201, created.body);
    const doomed = created.json().id as string;
    await putWebhook(a, owner, 'http://127.0.0.1:9/hook', ['call.transcript'], doomed);
    const call = liveCall(b, doomed);
    await call.say('one');
    const rotated = await a.request({ method: 'POST', url: '/v1/webhooks/rotate-secret', token: owner.accessToken, workspaceId: doomed });
    assert.equal(rotated.statusCode, 200, rotated.body);
    assert.deepEqual(b.platform.tenantEndpoints.peek(doomed), { url: 'http://127.0.0.1:9/hook', events: ['call.transcript'] }, 'still kept');
    await call.say('two');
    assert.deepEqual(await tenantLines(a, call.callId), ['one', 'two']);

    const deleted = await a.request({ method: 'DELETE', url: `/v1/workspaces/${doomed}`, token: owner.accessToken });
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.equal(b.platform.tenantEndpoints.peek(doomed), undefined);
    assert.equal(a.platform.tenantEndpoints.peek(doomed), undefined);
    // A line still arriving from the deleted workspace's call is written nowhere (the row would
    // name a workspace that no longer exists).
    await call.say('three');
  });
});

describe('the tenant endpoint cache safety net', () => {
  it('a change made behind the services is seen once AUTH_CACHE_TTL_SECONDS has passed (injected clock)', async (t) => {
    const clock = manualClock(new Date());
    const app = await buildTestApp({ t, clock, env: { AUTH_CACHE_TTL_SECONDS: '30' } });
    const owner = await signUp(app);
    const call = liveCall(app, owner.workspaceId);
    await call.say('one');
    // Written straight in the database: no service tells the cache.
    await sql`insert into webhook_endpoints (workspace_id, url, secret, events, created_at, updated_at)
      values (${owner.workspaceId}, 'http://127.0.0.1:9/hook', 'whsec_x', ${JSON.stringify(['call.transcript'])}, now(), now())`.execute(app.platform.db);
    clock.advance(29_000);
    assert.equal(await call.say('two'), 0, 'still the cached "no webhook"');
    clock.advance(1_000);
    await call.say('three');
    assert.deepEqual(await tenantLines(app, call.callId), ['three']);
  });

  it('AUTH_CACHE_TTL_SECONDS=0 reads the endpoint for every line', async (t) => {
    const app = await buildTestApp({ t, env: { AUTH_CACHE_TTL_SECONDS: '0' } });
    const owner = await signUp(app);
    const call = liveCall(app, owner.workspaceId);
    assert.equal(await call.say('one'), 1);
    assert.equal(await call.say('two'), 1);
    assert.equal(app.platform.tenantEndpoints.size, 0);
  });
});

describe('the tenant endpoint cache itself', () => {
  const clock = manualClock(new Date());
  const none = async () => undefined;

  it('does not keep what a lookup read when an invalidation came while it was reading', async () => {
    const cache = createTenantEndpointCache({ ttlSeconds: 30, clock });
    const endpoint = await cache.lookup('ws_1', async () => {
      cache.apply([{ kind: 'webhook_endpoint', workspaceId: 'ws_1' }]);
      return { url: 'http://127.0.0.1:9/old', events: ['call.transcript'] };
    });
    assert.equal(endpoint?.url, 'http://127.0.0.1:9/old', 'the caller still gets what was read');
    assert.equal(cache.peek('ws_1'), undefined, 'but it is not kept');
    await cache.lookup('ws_1', none);
    assert.equal(cache.peek('ws_1'), null);
  });

  it('holds at most maxEntries, the least recently used going first; the gate’s own events leave it alone', async () => {
    const cache = createTenantEndpointCache({ ttlSeconds: 30, clock, maxEntries: 2 });
    await cache.lookup('ws_1', none);
    await cache.lookup('ws_2', none);
    assert.equal(await cache.lookup('ws_1', () => assert.fail('ws_1 is cached')), null);
    await cache.lookup('ws_3', none);
    assert.equal(cache.size, 2);
    assert.equal(cache.peek('ws_2'), undefined, 'the least recently used went');
    assert.equal(cache.peek('ws_1'), null);
    cache.apply([
      { kind: 'key', id: 'key_1' },
      { kind: 'member', workspaceId: 'ws_1', userId: 'user_1' },
    ]);
    assert.equal(cache.size, 2);
    cache.apply([{ kind: 'workspace', id: 'ws_1' }]);
    assert.equal(cache.peek('ws_1'), undefined);
  });

  it('serves nothing while untrusted', async () => {
    let trusted = false;
    const cache = createTenantEndpointCache({ ttlSeconds: 30, clock, trusted: () => trusted });
    await cache.lookup('ws_1', none);
    assert.equal(cache.size, 0, 'nothing stored while untrusted');
    trusted = true;
    await cache.lookup('ws_1', none);
    trusted = false;
    assert.equal(cache.peek('ws_1'), undefined);
  });
});

describe('the tenant endpoint cache and its LISTEN connection', { skip: !usingPostgres() && 'PostgreSQL only (TEST_DATABASE_URL)' }, () => {
  it('forgets everything when the gate bus loses its connection, reads every line until it listens again, then caches again', async (t) => {
    const database = await otherHandle();
    const app = await buildTestApp({ t, database });
    const owner = await signUp(app);
    const call = liveCall(app, owner.workspaceId);
    await call.say('one');
    assert.equal(await call.say('two'), 0);

    const channel = `auth_gate_${database.schema}`;
    const killed = await sql`select pg_terminate_backend(pid) from pg_stat_activity where query = ${`LISTEN ${channel}`}`.execute(database.db);
    assert.ok(killed.rows.length >= 1);
    await until('the loss is noticed', async () => (app.platform.gate.serving ? undefined : true), 15_000);
    assert.equal(app.platform.tenantEndpoints.size, 0, 'nothing kept from before the loss');
    if (!app.platform.gate.serving) assert.equal(await call.say('three'), 1, 'read while not listening');
    await until('listening again', async () => (app.platform.gate.serving ? true : undefined), 15_000);
    await call.say('four');
    assert.equal(await call.say('five'), 0, 'cached again');
  });
});
