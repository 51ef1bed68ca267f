import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it, mock } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { usingPostgres } from '../../../test/support/database.ts';
import { createApiKey, signUp } from '../../../test/support/fixtures.ts';
import { manualClock, systemClock } from '../../platform/clock.ts';
import { openDatabase } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { createOutboundClient } from '../../platform/outbound/ssrf-guard.ts';
import type { EmitInput } from '../../platform/outbox/emit.ts';
import { newWebhookSecret } from '../../platform/outbox/signing.ts';
import { type Receiver, startReceiver } from './test-receiver.ts';
import { createWebhookWorker, type WorkerDeps } from './worker.ts';

// The delivery engine end to end: real HTTP receivers on 127.0.0.1, the real database, the
// worker driven by runDueOnce() and a clock the tests move (retries are due at once).

const clock = manualClock(new Date());
const receivers: Receiver[] = [];
const heldServers: http.Server[] = [];
after(async () => {
  for (const r of receivers) await r.close();
  for (const server of heldServers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function receiver(...args: Parameters<typeof startReceiver>) {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

function workerFor(t: TestApp, options: Partial<WorkerDeps> = {}) {
  const p = t.platform;
  return createWebhookWorker({ database: p.database, clock: p.clock, webhooks: p.config.webhooks, outbound: p.outbound, logger: p.logger, wake: p.events.wake, ...options });
}

function emit(t: TestApp, input: EmitInput) {
  return t.platform.db.transaction().execute((tx) => t.platform.events.emit(tx, input));
}

function agentDestination(url: string, events: string[] = []) {
  return { agentId: newId('agent'), url, secret: newWebhookSecret(), events };
}

async function deliveryRow(t: TestApp, id: string) {
  return t.platform.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

function attemptsOf(t: TestApp, deliveryId: string) {
  return t.platform.db.selectFrom('webhook_attempts').select(['attempt', 'status_code']).where('delivery_id', '=', deliveryId).orderBy('attempt').execute();
}

/** A real receiver on 127.0.0.1 that holds every request until the test answers it. */
async function heldReceiver() {
  const held: http.ServerResponse[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      held.push(res);
      for (const w of waiters.filter((x) => held.length >= x.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  heldServers.push(server);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    /** Resolves once `count` requests are held. */
    waitFor: (count: number) => (held.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve }))),
    answer: (index: number, status: number) => held[index].writeHead(status, { 'content-type': 'text/plain' }).end(),
  };
}

/** Runs the worker until nothing is due at the current clock time. */
async function drain(worker: ReturnType<typeof workerFor>) {
  for (let i = 0; i < 100; i++) if ((await worker.runDueOnce()) === 0) return;
  throw new Error('still delivering after 100 rounds');
}

describe('webhook delivery', async () => {
  const t = await buildTestApp({
    clock,
    env: { WEBHOOK_RETRY_SCHEDULE: '0,1s,2s', TENANT_WEBHOOK_RETRY_SCHEDULE: '0,1s,2s', WEBHOOK_TIMEOUT_MS: '5000' },
  });
  const worker = workerFor(t);

  it('sends each listing in its envelope, signed with X-Service-Signature and Standard Webhooks (verified by standardwebhooks)', async () => {
    const owner = await signUp(t);
    const agentHook = await receiver();
    const tenantHook = await receiver();
    const put = await t.request({
      method: 'PUT',
      url: '/v1/webhooks',
      token: owner.accessToken,
      payload: { webhook_url: tenantHook.url, events: ['call.ended', 'voice_session.ended', 'payment.succeeded'] },
    });
    assert.equal(put.statusCode, 200, put.body);
    const tenantSecret: string = put.json().webhook_secret;
    const agent = agentDestination(agentHook.url);
    const callId = newId('call');

    const ended = await emit(t, {
      workspaceId: owner.workspaceId,
      type: 'call.ended',
      agentId: agent.agentId,
      callId,
      agent,
      data: { duration_ms: 1200, status: 'completed', end_reason: 'caller_goodbye', transcript_url: 'https://x/t', recording_url: 'https://x/r' },
    });
    assert.equal(ended.deliveryIds.length, 2, 'agent and tenant destinations');
    const completed = await emit(t, { workspaceId: owner.workspaceId, type: 'call.completed', agentId: agent.agentId, callId, agent, data: { call_id: callId } });
    assert.equal(completed.deliveryIds.length, 1, 'the tenant webhook is not subscribed to call.completed');
    const session = await emit(t, { workspaceId: owner.workspaceId, type: 'voice_session.ended', agent, data: { room_name: 'r1', duration_sec: 3 } });
    assert.equal(session.deliveryIds.length, 1, 'tenant events never go to an agent');
    await drain(worker);

    assert.equal(agentHook.received.length, 2);
    assert.equal(tenantHook.received.length, 2);
    const byType = (r: Receiver, type: string) => {
      const hit = r.received.find((x) => {
        const body = JSON.parse(x.body);
        return (body.type ?? body.event) === type;
      });
      assert.ok(hit, `${type} received`);
      return hit;
    };

    // Listing A to the agent.
    const a = byType(agentHook, 'call.ended');
    const envelopeA = JSON.parse(a.body);
    assert.deepEqual(Object.keys(envelopeA), ['type', 'call_id', 'agent_id', 'timestamp', 'data', 'event_id']);
    assert.equal(envelopeA.event_id, ended.eventId);
    assert.equal(envelopeA.call_id, callId);
    assert.equal(envelopeA.agent_id, agent.agentId);
    assert.match(envelopeA.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(envelopeA.data.end_reason, 'caller_goodbye');
    // Listing B to the agent.
    const envelopeB = JSON.parse(byType(agentHook, 'call.completed').body);
    assert.deepEqual(Object.keys(envelopeB), ['event', 'id', 'ts', 'data']);
    assert.equal(envelopeB.id, completed.eventId);
    // Tenant envelope.
    const s = byType(tenantHook, 'voice_session.ended');
    const envelopeT = JSON.parse(s.body);
    assert.deepEqual(Object.keys(envelopeT), ['event', 'timestamp', 'data', 'id']);
    assert.equal(envelopeT.id, session.eventId);

    for (const [hit, secret] of [
      [a, agent.secret],
      [s, tenantSecret],
      [byType(tenantHook, 'call.ended'), tenantSecret],
    ] as const) {
      assert.equal(hit.headers['content-type'], 'application/json');
      assert.match(String(hit.headers['user-agent']), /^VoiceAgentPlatform-Webhooks\//);
      const expected = `sha256=${createHmac('sha256', secret).update(hit.body).digest('hex')}`;
      assert.equal(hit.headers['x-service-signature'], expected);
      const body = JSON.parse(hit.body);
      assert.equal(hit.headers['webhook-id'], body.event_id ?? body.id, 'webhook-id is the event id');
      const verified = new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>);
      assert.deepEqual(verified, body);
      assert.throws(() => new Webhook(newWebhookSecret()).verify(hit.body, hit.headers as Record<string, string>));
    }
    // The same event to two destinations: same event id, its own delivery each.
    assert.equal(byType(tenantHook, 'call.ended').headers['webhook-id'], ended.eventId);

    const list = await t.request({ method: 'GET', url: '/v1/webhooks/deliveries?event_type=call.ended', token: owner.accessToken });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(list.json().data.map((d: { destination: string }) => d.destination).sort(), ['agent', 'tenant']);
    assert.ok(list.json().data.every((d: { status: string }) => d.status === 'succeeded'));
  });

  it('narrows agent events by the agent webhook_events and tenant events by its subscription', async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    const agent = agentDestination(hook.url, ['call.ended']);
    const started = await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent, data: {} });
    assert.deepEqual(started.deliveryIds, []);
    const rows = await t.platform.db.selectFrom('webhook_events').select('id').where('id', '=', started.eventId).execute();
    assert.equal(rows.length, 0, 'an event nobody subscribes to is not stored');
    const put = await t.request({ method: 'PUT', url: '/v1/webhooks', token: owner.accessToken, payload: { webhook_url: hook.url } });
    assert.deepEqual(put.json().events, ['campaign.completed', 'payment.succeeded', 'voice_session.ended', 'wallet.low_balance']);
    const low = await emit(t, { workspaceId: owner.workspaceId, type: 'wallet.low_balance', data: { balance_usd: 1, threshold_usd: 5 } });
    assert.equal(low.deliveryIds.length, 1);
    const agentOnly = await emit(t, { workspaceId: owner.workspaceId, type: 'webhook.test', agent, agentOnly: true, data: { message: 'hi' } });
    assert.equal(agentOnly.deliveryIds.length, 1, 'webhook.test reaches the agent whatever its events');
    const row = await deliveryRow(t, agentOnly.deliveryIds[0]);
    assert.equal(row.destination, 'agent');
    await drain(worker);
    assert.equal(hook.received.length, 2);
    const test = hook.received.map((r) => JSON.parse(r.body)).find((b) => b.event === 'webhook.test');
    assert.deepEqual(Object.keys(test), ['event', 'timestamp', 'data', 'id']);
  });

  it('emitAlone writes nothing for an event nobody receives, and the event with its deliveries for one that someone does', async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    const unheard = await t.platform.events.emitAlone(t.platform.db, { workspaceId: owner.workspaceId, type: 'call.transcript', agent: agentDestination(hook.url, ['call.ended']), data: { text: 'hi' } });
    assert.equal(unheard, null, 'no event and no id');
    const stored = await t.platform.db.selectFrom('webhook_events').select('id').where('workspace_id', '=', owner.workspaceId).execute();
    assert.equal(stored.length, 0);
    const agent = agentDestination(hook.url, ['call.transcript']);
    const heard = await t.platform.events.emitAlone(t.platform.db, { workspaceId: owner.workspaceId, type: 'call.transcript', agent, callId: 'call_x', data: { text: 'hello' } });
    assert.ok(heard);
    assert.equal(heard.deliveryIds.length, 1);
    assert.equal((await deliveryRow(t, heard.deliveryIds[0])).event_id, heard.eventId);
    await drain(worker);
    assert.equal(JSON.parse(hook.received[0].body).data.text, 'hello');
  });

  it('retries a 500-500-200 receiver: three requests with one event id, then succeeded', async () => {
    const owner = await signUp(t);
    const hook = await receiver((_r, i) => (i < 2 ? { status: 500, body: 'oops' } : 200));
    const emitted = await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(hook.url), data: { direction: 'web' } });
    const id = emitted.deliveryIds[0];
    await drain(worker);
    let row = await deliveryRow(t, id);
    assert.equal(row.status, 'pending');
    assert.equal(row.attempt_count, 1);
    assert.equal(row.last_status_code, 500);
    const first = row.first_attempt_at as Date;
    const delay = (row.next_attempt_at as Date).getTime() - first.getTime();
    assert.ok(delay >= 900 && delay <= 1100, `second attempt ~1 s after the first (±10 %), got ${delay} ms`);
    await drain(worker);
    assert.equal(hook.received.length, 1, 'nothing more before the next attempt is due');
    clock.advance(1200);
    await drain(worker);
    clock.advance(1000);
    await drain(worker);
    row = await deliveryRow(t, id);
    assert.equal(row.status, 'succeeded');
    assert.equal(row.attempt_count, 3);
    assert.equal(hook.received.length, 3);
    assert.deepEqual(new Set(hook.received.map((r) => r.headers['webhook-id'])), new Set([emitted.eventId]));
    const detail = await t.request({ method: 'GET', url: `/v1/webhooks/deliveries/${id}`, token: owner.accessToken });
    assert.equal(detail.statusCode, 200, detail.body);
    const body = detail.json();
    assert.deepEqual(body.attempts.map((a: { status_code: number }) => a.status_code), [500, 500, 200]);
    assert.equal(body.attempts[0].response_excerpt, 'oops');
    assert.equal(body.payload.event_id, emitted.eventId);
  });

  it('sends a 400 receiver exactly one request and marks the delivery failed', async () => {
    const owner = await signUp(t);
    const hook = await receiver(() => ({ status: 400, body: 'x'.repeat(5000) }));
    const emitted = await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(hook.url), data: {} });
    await drain(worker);
    clock.advance(5000);
    await drain(worker);
    assert.equal(hook.received.length, 1);
    const row = await deliveryRow(t, emitted.deliveryIds[0]);
    assert.equal(row.status, 'failed');
    const attempt = await t.platform.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', row.id).executeTakeFirstOrThrow();
    assert.equal(attempt.response_excerpt?.length, 2048, 'the response excerpt is capped at 2 KB');
  });

  it('retries 408 and 429 like 5xx', async () => {
    const owner = await signUp(t);
    const hook = await receiver((_r, i) => [408, 429, 204][i] ?? 204);
    const emitted = await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(hook.url), data: {} });
    for (let i = 0; i < 3; i++) {
      await drain(worker);
      clock.advance(1200);
    }
    assert.equal(hook.received.length, 3);
    assert.equal((await deliveryRow(t, emitted.deliveryIds[0])).status, 'succeeded');
  });

  it('times out a silent receiver and retries it; after the last attempt the delivery is dead, listed in failed, and a replay delivers it', async () => {
    const owner = await signUp(t);
    const hook = await receiver(() => 'hang');
    // A short timeout for this worker only (a loaded machine must not time out the other tests).
    const impatient = workerFor(t, { webhooks: { ...t.platform.config.webhooks, timeoutMs: 300 } });
    const put = await t.request({ method: 'PUT', url: '/v1/webhooks', token: owner.accessToken, payload: { webhook_url: hook.url } });
    assert.equal(put.statusCode, 200, put.body);
    const emitted = await emit(t, { workspaceId: owner.workspaceId, type: 'wallet.low_balance', data: { balance_usd: 1, threshold_usd: 5 } });
    const id = emitted.deliveryIds[0];
    await drain(impatient);
    let row = await deliveryRow(t, id);
    assert.equal(row.status, 'pending');
    assert.match(String(row.last_error), /timeout/);
    for (let i = 0; i < 2; i++) {
      clock.advance(1100);
      await drain(impatient);
    }
    row = await deliveryRow(t, id);
    assert.equal(row.status, 'dead');
    assert.equal(row.attempt_count, 3);
    assert.equal(hook.received.length, 3);

    const failed = await t.request({ method: 'GET', url: '/v1/webhooks/failed', token: owner.accessToken });
    assert.equal(failed.statusCode, 200, failed.body);
    assert.deepEqual(failed.json().data.map((d: { id: string }) => d.id), [id]);

    hook.setRespond(() => 200);
    const replay = await t.request({ method: 'POST', url: `/v1/webhooks/failed/${id}/replay`, token: owner.accessToken, payload: {} });
    assert.equal(replay.statusCode, 202, replay.body);
    assert.equal(replay.json().status, 'pending');
    await drain(impatient);
    row = await deliveryRow(t, id);
    assert.equal(row.status, 'succeeded');
    assert.equal(row.attempt_count, 4);
    assert.equal(hook.received.length, 4);
    assert.equal(hook.received[3].headers['webhook-id'], emitted.eventId, 'a replay keeps the event id');
    const attempts = await t.platform.db.selectFrom('webhook_attempts').select(['attempt', 'trigger']).where('delivery_id', '=', id).orderBy('attempt').execute();
    assert.deepEqual(attempts.map((a) => a.trigger), ['scheduled', 'scheduled', 'scheduled', 'manual']);
  });

  it('emits nothing when the emitting transaction rolls back', async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    let eventId = '';
    await assert.rejects(
      t.platform.db.transaction().execute(async (tx) => {
        const emitted = await t.platform.events.emit(tx, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(hook.url), data: {} });
        eventId = emitted.eventId;
        throw new Error('the state change failed');
      }),
      /the state change failed/,
    );
    await drain(worker);
    assert.equal(hook.received.length, 0);
    const rows = await t.platform.db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', eventId).execute();
    assert.equal(rows.length, 0);
  });

  it('never sends the same attempt twice with two concurrent workers', async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    const agent = agentDestination(hook.url);
    const ids = new Set<string>();
    await t.platform.db.transaction().execute(async (tx) => {
      for (let i = 0; i < 120; i++) ids.add((await t.platform.events.emit(tx, { workspaceId: owner.workspaceId, type: 'call.started', agent, data: { i } })).eventId);
    });
    // A generous timeout: 120 POSTs queued on a busy machine may wait seconds for a connection, and
    // a timed-out attempt is retried later (rightly), which is not what this test is about.
    const patient = { ...t.platform.config.webhooks, timeoutMs: 120_000 };
    const one = workerFor(t, { holder: 'worker-one', webhooks: patient });
    const two = workerFor(t, { holder: 'worker-two', webhooks: patient });
    await Promise.all([drain(one), drain(two)]);
    const failures = await t.platform.db.selectFrom('webhook_attempts').select(['error', 'status_code']).where('workspace_id', '=', owner.workspaceId).where('error', 'is not', null).execute();
    assert.deepEqual(failures, [], 'no attempt failed');
    assert.equal(hook.received.length, 120);
    assert.deepEqual(new Set(hook.received.map((r) => r.headers['webhook-id'])), ids);
    const attempts = await t.platform.db
      .selectFrom('webhook_attempts')
      .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
      .select(['webhook_attempts.attempt'])
      .where('webhook_deliveries.workspace_id', '=', owner.workspaceId)
      .execute();
    assert.equal(attempts.length, 120);
    assert.ok(attempts.every((a) => a.attempt === 1));
  });

  it('claims a delivery again once the lease of a lost worker expires', async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    const emitted = await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(hook.url), data: {} });
    const id = emitted.deliveryIds[0];
    // A worker claims and "dies": simulate by claiming through a worker whose outbound never returns.
    const stuck = workerFor(t, {
      holder: 'lost-worker',
      outbound: { request: () => new Promise(() => undefined), close: async () => undefined } as unknown as WorkerDeps['outbound'],
    });
    void stuck.runDueOnce();
    for (let i = 0; i < 50 && (await deliveryRow(t, id)).lease_holder !== 'lost-worker'; i++) await new Promise((r) => setTimeout(r, 10));
    let row = await deliveryRow(t, id);
    assert.equal(row.lease_holder, 'lost-worker');
    assert.equal(row.attempt_count, 1, 'the attempt is counted at claim');
    await drain(worker);
    assert.equal(hook.received.length, 0, 'not claimed while the lease holds');
    clock.advance(t.platform.config.webhooks.timeoutMs + 5000 + 1);
    await drain(worker);
    row = await deliveryRow(t, id);
    assert.equal(row.status, 'succeeded');
    assert.equal(row.attempt_count, 2);
    assert.equal(hook.received.length, 1);
  });

  it('drops the late result of a worker whose lease expired once the delivery was claimed again', async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    const emitted = await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(hook.url), data: {} });
    const id = emitted.deliveryIds[0];
    let answer: ((response: unknown) => void) | undefined;
    const slow = workerFor(t, {
      holder: 'slow-worker',
      outbound: {
        request: () =>
          new Promise((resolve) => {
            answer = resolve;
          }),
        close: async () => undefined,
      } as unknown as WorkerDeps['outbound'],
    });
    const slowRun = slow.runDueOnce();
    for (let i = 0; i < 100 && !answer; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(answer, 'the slow worker sent its attempt');
    clock.advance(t.platform.config.webhooks.timeoutMs + 5000 + 1);
    await drain(worker);
    assert.equal((await deliveryRow(t, id)).status, 'succeeded');
    // The first worker comes back with a 500 for attempt 1: too late, nothing of it is applied.
    answer({ status: 500, headers: {}, body: Buffer.from('late'), truncated: false, durationMs: 1, url: hook.url });
    assert.equal(await slowRun, 1);
    const row = await deliveryRow(t, id);
    assert.deepEqual([row.status, row.attempt_count, row.last_status_code, row.lease_holder], ['succeeded', 2, 200, null]);
    const attempts = await t.platform.db.selectFrom('webhook_attempts').select(['attempt', 'status_code']).where('delivery_id', '=', id).execute();
    assert.deepEqual(attempts, [{ attempt: 2, status_code: 200 }]);
  });

  // The fence: a result is applied only by the holder of this attempt's lease. A retry can be
  // claimed by another worker or, its lease having run out, by the same one (the same holder).
  for (const retrier of ['another worker', 'the same worker'] as const) {
    it(`drops the late result of an attempt whose lease expired while its retry is still in flight (retried by ${retrier})`, async () => {
      const owner = await signUp(t);
      const hook = await heldReceiver();
      const emitted = await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(hook.url), data: {} });
      const id = emitted.deliveryIds[0];
      const first = workerFor(t, { holder: 'first-worker' });
      const firstRun = first.runDueOnce();
      await hook.waitFor(1);
      clock.advance(t.platform.config.webhooks.timeoutMs + 5000 + 1);
      const second = retrier === 'the same worker' ? first : workerFor(t, { holder: 'second-worker' });
      const secondRun = second.runDueOnce();
      await hook.waitFor(2);
      const retrying = await deliveryRow(t, id);
      assert.deepEqual([retrying.status, retrying.attempt_count, retrying.lease_holder], ['pending', 2, second.holder]);

      hook.answer(0, 500); // attempt 1 comes back after its lease ended
      assert.equal(await firstRun, 1);
      assert.deepEqual(await deliveryRow(t, id), retrying, 'the late result changed nothing');
      assert.deepEqual(await attemptsOf(t, id), []);

      hook.answer(1, 200);
      assert.equal(await secondRun, 1);
      const done = await deliveryRow(t, id);
      assert.deepEqual([done.status, done.attempt_count, done.last_status_code, done.lease_holder], ['succeeded', 2, 200, null]);
      assert.deepEqual(await attemptsOf(t, id), [{ attempt: 2, status_code: 200 }]);
    });
  }

  it('records any response body: a NUL byte, a multi-byte character cut at the 2 KB cap', async () => {
    const owner = await signUp(t);
    const bodies = ['ok\u0000fine', `${'x'.repeat(2047)}é${'y'.repeat(100)}`];
    const hook = await receiver((_r, i) => ({ status: 200, body: bodies[i] }));
    const ids: string[] = [];
    for (let i = 0; i < bodies.length; i++) {
      ids.push((await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(hook.url), data: { i } })).deliveryIds[0]);
      await drain(worker);
    }
    clock.advance(t.platform.config.webhooks.timeoutMs + 5000 + 1);
    await drain(worker);
    assert.equal(hook.received.length, 2, 'each delivered once, not again after the lease');
    const excerpts: string[] = [];
    for (const id of ids) {
      assert.equal((await deliveryRow(t, id)).status, 'succeeded');
      const attempt = await t.platform.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).executeTakeFirstOrThrow();
      excerpts.push(String(attempt.response_excerpt));
    }
    assert.equal(excerpts[0], 'okfine');
    assert.equal(excerpts[1], 'x'.repeat(2047), 'at most 2 KB of UTF-8, no half character');
  });

  it('fails at once a delivery whose URL the SSRF guard refuses at connect time (DNS rebinding)', async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    // The first lookup answers a public address, the connect-time lookup the real one (127.0.0.1).
    const lookup = mock.method(dns.promises, 'lookup', async () => [{ address: '93.184.216.34', family: 4 }]);
    const outbound = createOutboundClient({ allowPrivate: false });
    try {
      const strict = workerFor(t, { outbound });
      const url = hook.url.replace('127.0.0.1', 'localhost');
      const emitted = await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(url), data: {} });
      await drain(strict);
      const row = await deliveryRow(t, emitted.deliveryIds[0]);
      assert.equal(row.status, 'failed');
      assert.match(String(row.last_error), /^URL refused: .*127\.0\.0\.1/);
      assert.equal(hook.received.length, 0);
    } finally {
      lookup.mock.restore();
      await outbound.close();
    }
  });

  it('keeps the order of one call\'s events for their first attempt', async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    const agent = agentDestination(hook.url);
    const callId = newId('call');
    const sent: string[] = [];
    for (let i = 0; i < 8; i++) {
      sent.push((await emit(t, { workspaceId: owner.workspaceId, type: 'call.transcript', callId, agent, data: { turn: i } })).eventId);
    }
    await drain(worker);
    assert.deepEqual(hook.received.map((r) => r.headers['webhook-id']), sent);
  });

  it('wakes a started worker on emit, without waiting for its polling', async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    const live = workerFor(t, { pollIntervalMs: 60_000 });
    await live.start();
    try {
      await drain(worker);
      const emitted = await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(hook.url), data: {} });
      await hook.waitFor(1, 5000);
      assert.equal(hook.received[0].headers['webhook-id'], emitted.eventId);
    } finally {
      await live.stop();
    }
  });

  it("signs retries and replays of an agent's events with the agent's current secrets after a rotation", async () => {
    const owner = await signUp(t);
    const hook = await receiver((_r, i) => (i === 0 ? 500 : 200));
    const created = await t.request({ method: 'POST', url: '/v1/agents', token: owner.accessToken, payload: { name: 'Hooked', webhook_url: hook.url } });
    assert.equal(created.statusCode, 201, created.body);
    const { id: agentId, webhook_secret: oldSecret } = created.json();
    const test = await t.request({ method: 'POST', url: `/v1/agents/${agentId}/webhook/test`, token: owner.accessToken, payload: {} });
    assert.equal(test.statusCode, 202, test.body);
    await drain(worker);
    assert.equal(hook.received.length, 1);
    const rotated = await t.request({ method: 'POST', url: `/v1/agents/${agentId}/webhook-secret/rotate`, token: owner.accessToken, payload: {} });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const newSecret: string = rotated.json().webhook_secret;
    clock.advance(1200);
    await drain(worker);
    assert.equal(hook.received.length, 2, 'the retry after the rotation');
    const retry = hook.received[1];
    const headers = retry.headers as Record<string, string>;
    assert.equal(headers['x-service-signature'], `sha256=${createHmac('sha256', newSecret).update(retry.body).digest('hex')}`);
    new Webhook(newSecret).verify(retry.body, headers);
    new Webhook(oldSecret).verify(retry.body, headers);
    // A day later the old secret no longer signs, a replay included.
    const [delivery] = (await t.request({ method: 'GET', url: '/v1/webhooks/deliveries?destination=agent', token: owner.accessToken })).json().data;
    const key = await createApiKey(t, owner, 'write');
    clock.advance(24 * 3600e3 + 1000);
    const again = await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${delivery.id}/retry`, token: key.key, payload: {} });
    assert.equal(again.statusCode, 202, again.body);
    await drain(worker);
    assert.equal(hook.received.length, 3);
    const late = hook.received[2];
    assert.equal(late.headers['x-service-signature'], `sha256=${createHmac('sha256', newSecret).update(late.body).digest('hex')}`);
    assert.equal(String(late.headers['webhook-signature']).split(' ').length, 1, 'only the new secret signs after 24 h');
  });
});

describe('webhook delivery: a schedule written without its first attempt', async () => {
  const later = manualClock(new Date());
  const t = await buildTestApp({ clock: later, env: { WEBHOOK_RETRY_SCHEDULE: '1s,2s', TENANT_WEBHOOK_RETRY_SCHEDULE: '1s,2s', WEBHOOK_TIMEOUT_MS: '5000' } });
  const worker = workerFor(t);

  it('reads `1s,2s` as attempts at 0, 1 s and 2 s (DESIGN), for agent and tenant deliveries', async () => {
    const owner = await signUp(t);
    const hook = await receiver(() => 500);
    const put = await t.request({ method: 'PUT', url: '/v1/webhooks', token: owner.accessToken, payload: { webhook_url: hook.url } });
    assert.equal(put.statusCode, 200, put.body);
    const agent = await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(hook.url), data: {} });
    const tenant = await emit(t, { workspaceId: owner.workspaceId, type: 'wallet.low_balance', data: { balance_usd: 1, threshold_usd: 5 } });
    const ids = [agent.deliveryIds[0], tenant.deliveryIds[0]];
    await drain(worker);
    assert.equal(hook.received.length, 2, 'the first attempts are sent at once');
    later.advance(1150);
    await drain(worker);
    assert.equal(hook.received.length, 4);
    later.advance(1150);
    await drain(worker);
    assert.equal(hook.received.length, 6);
    for (const id of ids) {
      const row = await deliveryRow(t, id);
      assert.deepEqual([row.status, row.attempt_count, row.max_attempts], ['dead', 3, 3]);
    }
  });
});

describe('webhook delivery: real clock', async () => {
  const t = await buildTestApp({ env: { TENANT_WEBHOOK_RETRY_SCHEDULE: '0,1s' } });
  const worker = workerFor(t);

  it('signs with both the old and the new tenant secret for 24 h after a rotation', async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    const put = await t.request({ method: 'PUT', url: '/v1/webhooks', token: owner.accessToken, payload: { webhook_url: hook.url } });
    const oldSecret = put.json().webhook_secret;
    const rotated = await t.request({ method: 'POST', url: '/v1/webhooks/rotate-secret', token: owner.accessToken, payload: {} });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const newSecret = rotated.json().webhook_secret;
    assert.notEqual(newSecret, oldSecret);
    await emit(t, { workspaceId: owner.workspaceId, type: 'wallet.low_balance', data: { balance_usd: 1, threshold_usd: 5 } });
    await drain(worker);
    const hit = hook.received[0];
    assert.equal(String(hit.headers['webhook-signature']).split(' ').length, 2);
    const headers = hit.headers as Record<string, string>;
    new Webhook(oldSecret).verify(hit.body, headers);
    new Webhook(newSecret).verify(hit.body, headers);
    assert.equal(headers['x-service-signature'], `sha256=${createHmac('sha256', newSecret).update(hit.body).digest('hex')}`);
  });

  it("signs agent deliveries with the agent's previous secret too while it is valid", async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    const previous = newWebhookSecret();
    const current = agentDestination(hook.url);
    const valid = { ...current, previousSecret: previous, previousSecretExpiresAt: new Date(Date.now() + 3600e3) };
    const expired = { ...current, previousSecret: previous, previousSecretExpiresAt: new Date(Date.now() - 1000) };
    await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: valid, data: { n: 1 } });
    await drain(worker);
    await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: expired, data: { n: 2 } });
    await drain(worker);
    assert.equal(hook.received.length, 2);
    const [during, afterwards] = hook.received.map((r) => ({ body: r.body, headers: r.headers as Record<string, string> }));
    new Webhook(previous).verify(during.body, during.headers);
    new Webhook(current.secret).verify(during.body, during.headers);
    new Webhook(current.secret).verify(afterwards.body, afterwards.headers);
    assert.throws(() => new Webhook(previous).verify(afterwards.body, afterwards.headers));
  });

  it('wakes the worker of another instance through LISTEN/NOTIFY', { skip: !usingPostgres() && 'PostgreSQL only (TEST_DATABASE_URL)' }, async () => {
    const owner = await signUp(t);
    const hook = await receiver();
    // Another instance: its own pool on the same schema, no in-process nudge, no useful polling.
    const other = await openDatabase({ databaseUrl: process.env.TEST_DATABASE_URL, schema: t.platform.database.schema, poolSize: 2 });
    const remote = createWebhookWorker({
      database: other,
      clock: systemClock,
      webhooks: t.platform.config.webhooks,
      outbound: t.platform.outbound,
      logger: t.platform.logger,
      pollIntervalMs: 60_000,
    });
    await remote.start();
    try {
      const emitted = await emit(t, { workspaceId: owner.workspaceId, type: 'call.started', agent: agentDestination(hook.url), data: {} });
      await hook.waitFor(1, 5000);
      assert.equal(hook.received[0].headers['webhook-id'], emitted.eventId);
    } finally {
      await remote.stop();
      await other.close();
    }
  });
});
