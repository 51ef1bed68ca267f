import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { manualClock } from '../../platform/clock.ts';
import { as, createCallAgent, waitForEnd } from '../calls/test-helpers.ts';
import { createSchedulesRepo } from './repo.ts';
import { createScheduleWorker } from './worker.ts';

// Schedules through the API on a moved clock: create, read, list, change, cancel, run; the worker's
// firing (once, the call queued with the schedule's id and variables, late when overdue, failed
// when the call cannot be placed), and a worker started after the time (late at start-up).

const clock = manualClock(new Date());
const t = await buildTestApp({ clock });
const inSeconds = (s: number) => new Date(clock.now().getTime() + s * 1000).toISOString();

async function schedule(user: TestUser, body: Record<string, unknown> = {}) {
  const agent = body.agent_id ? { id: body.agent_id } : await createCallAgent(t, user);
  const res = await t.request({ method: 'POST', url: '/v1/schedules', ...as(user), payload: { agent_id: agent.id, to: '+15550100200', scheduled_at: inSeconds(60), ...body } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

const get = async (user: TestUser, id: string) => {
  const res = await t.request({ method: 'GET', url: `/v1/schedules/${id}`, ...as(user) });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
};

/** Fires what is due; answers this schedule's rows among those fired. */
const fire = async (id: string) => (await t.modules.schedules.worker.runDueOnce()).filter((row) => row.id === id);

describe('schedules', () => {
  it('creates, reads back, lists with filters', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const at = inSeconds(3600);
    const created = await schedule(user, { agent_id: agent.id, to: '+1 555 010 0201', scheduled_at: at, variables: { name: 'Ada' }, metadata: { crm: 7 } });
    assert.match(created.id, /^sch_[0-9a-z]{26}$/);
    assert.equal(created.status, 'scheduled');
    assert.equal(created.to, '+15550100201');
    assert.equal(created.from, null);
    assert.equal(created.scheduled_at, at);
    assert.deepEqual(created.variables, { name: 'Ada' });
    assert.deepEqual(created.metadata, { crm: 7 });
    assert.equal(created.call_id, null);
    assert.equal(created.late, false);
    assert.equal(created.dispatched_at, null);
    assert.deepEqual(await get(user, created.id), created);

    const other = await schedule(user);
    await t.request({ method: 'DELETE', url: `/v1/schedules/${other.id}`, ...as(user) });
    const all = (await t.request({ method: 'GET', url: '/v1/schedules', ...as(user) })).json();
    assert.deepEqual(all.data.map((s: { id: string }) => s.id), [other.id, created.id]);
    const scheduled = (await t.request({ method: 'GET', url: '/v1/schedules?status=scheduled', ...as(user) })).json();
    assert.deepEqual(scheduled.data.map((s: { id: string }) => s.id), [created.id]);
    const byAgent = (await t.request({ method: 'GET', url: `/v1/schedules?agent_id=${agent.id}&limit=1`, ...as(user) })).json();
    assert.deepEqual(byAgent.data.map((s: { id: string }) => s.id), [created.id]);
    assert.equal(byAgent.has_more, false);
    const page1 = (await t.request({ method: 'GET', url: '/v1/schedules?limit=1', ...as(user) })).json();
    assert.equal(page1.has_more, true);
    const page2 = (await t.request({ method: 'GET', url: `/v1/schedules?limit=1&cursor=${page1.next_cursor}`, ...as(user) })).json();
    assert.deepEqual(page2.data.map((s: { id: string }) => s.id), [created.id]);
  });

  it('refuses bad input with 422 naming the field', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const post = (payload: Record<string, unknown>) => t.request({ method: 'POST', url: '/v1/schedules', ...as(user), payload: { agent_id: agent.id, to: '+15550100200', scheduled_at: inSeconds(60), ...payload } });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ scheduled_at: inSeconds(-60) }, 'scheduled_at'],
      [{ scheduled_at: inSeconds(400 * 24 * 3600) }, 'scheduled_at'],
      [{ scheduled_at: 'tomorrow' }, 'scheduled_at'],
      [{ to: 'not a number' }, 'to'],
      [{ from: '12' }, 'from'],
      [{ agent_id: 'agent_nope' }, 'agent_id'],
      [{ surprise: true }, 'surprise'],
      [{ variables: { n: 5 } }, 'variables'],
    ];
    for (const [payload, path] of cases) {
      const res = await post(payload);
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      assert.equal(res.json().code, 'validation_failed');
      assert.ok(
        res.json().errors.some((e: { path: string }) => e.path.includes(path)),
        `${JSON.stringify(payload)}: ${res.body}`,
      );
    }
    const missing = await t.request({ method: 'POST', url: '/v1/schedules', ...as(user), payload: { agent_id: agent.id, to: '+15550100200' } });
    assert.equal(missing.statusCode, 422);
    // A few seconds of clock skew are accepted: it fires at once.
    const skewed = await post({ scheduled_at: inSeconds(-2) });
    assert.equal(skewed.statusCode, 201, skewed.body);
    // A number on the do-not-call list is refused as POST /v1/calls/outbound refuses it.
    await t.request({ method: 'POST', url: '/v1/dnc', ...as(user), payload: { number: '+15550100777' } });
    const dnc = await post({ to: '+15550100777' });
    assert.equal(dnc.statusCode, 422);
    assert.equal(dnc.json().code, 'do_not_call');
  });

  it('fires once at its time: the call is queued with the schedule id and variables, and runs', async () => {
    const user = await signUp(t);
    const created = await schedule(user, { variables: { name: 'Grace' }, metadata: { source: 'crm' }, simulation: { caller_script: ['Thanks, goodbye.'] } });
    assert.deepEqual(await fire(created.id), [], 'not due yet');
    clock.advance(60_000);
    const [fired] = await fire(created.id);
    assert.equal(fired?.status, 'dispatched');
    const after = await get(user, created.id);
    assert.equal(after.status, 'dispatched');
    assert.equal(after.late, false);
    assert.equal(after.dispatched_at, clock.now().toISOString());
    assert.match(after.call_id, /^call_/);
    assert.deepEqual(await fire(created.id), [], 'fired once');
    const calls = await t.platform.db.selectFrom('calls').select(['id']).where('schedule_id', '=', created.id).execute();
    assert.deepEqual(calls.map((c) => c.id), [after.call_id]);

    const call = (await t.request({ method: 'GET', url: `/v1/calls/${after.call_id}`, ...as(user) })).json();
    assert.equal(call.schedule_id, created.id);
    assert.equal(call.direction, 'outbound');
    assert.equal(call.to, '+15550100200');
    assert.deepEqual(call.variables, { name: 'Grace' });
    assert.deepEqual(call.metadata, { source: 'crm' });
    assert.equal(call.status, 'queued');
    // It runs through the call runtime like any other call.
    const ended = await waitForEnd(t, user, after.call_id);
    assert.equal(ended.status, 'completed', JSON.stringify(ended));
    assert.ok(ended.transcript.some((e: { role: string; text: string }) => e.role === 'user' && e.text === 'Thanks, goodbye.'));

    // Once dispatched: no cancel, no run, no change.
    for (const [method, url, payload] of [
      ['DELETE', `/v1/schedules/${created.id}`, undefined],
      ['POST', `/v1/schedules/${created.id}/run`, undefined],
      ['PATCH', `/v1/schedules/${created.id}`, { variables: {} }],
    ] as const) {
      const res = await t.request({ method, url, ...as(user), payload });
      assert.equal(res.statusCode, 409, `${method} ${url}: ${res.body}`);
      assert.equal(res.json().code, 'invalid_state');
    }
  });

  it('is late when it fires more than 5 s after its time (no worker was running)', async () => {
    const user = await signUp(t);
    const created = await schedule(user);
    clock.advance(10 * 60_000);
    await fire(created.id);
    const after = await get(user, created.id);
    assert.equal(after.status, 'dispatched');
    assert.equal(after.late, true);
    assert.equal(after.dispatched_at, clock.now().toISOString());
  });

  it('changes only while scheduled; a moved schedule fires at its new time', async () => {
    const user = await signUp(t);
    const created = await schedule(user, { variables: { a: '1' } });
    const other = await createCallAgent(t, user, { name: 'Bea' });
    const patch = (payload: Record<string, unknown>) => t.request({ method: 'PATCH', url: `/v1/schedules/${created.id}`, ...as(user), payload });
    const moved = await patch({ scheduled_at: inSeconds(600), agent_id: other.id, from: '+15550100001' });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().scheduled_at, inSeconds(600));
    assert.equal(moved.json().agent_id, other.id);
    assert.equal(moved.json().from, '+15550100001');
    assert.deepEqual(moved.json().variables, { a: '1' }, 'fields not sent are kept');
    const cleared = await patch({ from: null });
    assert.equal(cleared.json().from, null);
    for (const [payload, path] of [
      [{ scheduled_at: inSeconds(-60) }, 'scheduled_at'],
      [{ to: 'x' }, 'to'],
      [{ agent_id: 'agent_gone' }, 'agent_id'],
      [{ status: 'dispatched' }, 'status'],
    ] as const) {
      const res = await patch(payload);
      assert.equal(res.statusCode, 422, res.body);
      assert.ok(res.json().errors.some((e: { path: string }) => e.path.includes(path)), res.body);
    }
    clock.advance(60_000);
    assert.deepEqual(await fire(created.id), [], 'not at its old time');
    clock.advance(540_000);
    assert.equal((await fire(created.id))[0]?.status, 'dispatched');
    const call = await t.platform.db.selectFrom('calls').selectAll().where('schedule_id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal(call.agent_id, other.id);
  });

  it('DELETE cancels: it never fires, canceling again answers it, run and PATCH are 409', async () => {
    const user = await signUp(t);
    const created = await schedule(user);
    const canceled = await t.request({ method: 'DELETE', url: `/v1/schedules/${created.id}`, ...as(user) });
    assert.equal(canceled.statusCode, 200, canceled.body);
    assert.equal(canceled.json().status, 'canceled');
    assert.equal(canceled.json().canceled_at, clock.now().toISOString());
    const again = await t.request({ method: 'DELETE', url: `/v1/schedules/${created.id}`, ...as(user) });
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), canceled.json());
    clock.advance(120_000);
    assert.deepEqual(await fire(created.id), []);
    assert.equal((await get(user, created.id)).status, 'canceled');
    const run = await t.request({ method: 'POST', url: `/v1/schedules/${created.id}/run`, ...as(user) });
    assert.equal(run.statusCode, 409);
    assert.equal(run.json().code, 'invalid_state');
    const patch = await t.request({ method: 'PATCH', url: `/v1/schedules/${created.id}`, ...as(user), payload: { variables: {} } });
    assert.equal(patch.statusCode, 409);
    const missing = await t.request({ method: 'DELETE', url: '/v1/schedules/sch_00000000000000000000000000', ...as(user) });
    assert.equal(missing.statusCode, 404);
  });

  it('run fires now, not late; a refusal is answered and leaves it scheduled', async () => {
    const user = await signUp(t);
    const created = await schedule(user, { scheduled_at: inSeconds(3600), variables: { v: 'x' } });
    await t.platform.db.updateTable('wallets').set({ balance_micros: 0 }).where('workspace_id', '=', user.workspaceId).execute();
    const broke = await t.request({ method: 'POST', url: `/v1/schedules/${created.id}/run`, ...as(user) });
    assert.equal(broke.statusCode, 402, broke.body);
    assert.equal(broke.json().code, 'insufficient_balance');
    assert.equal((await get(user, created.id)).status, 'scheduled');
    await t.platform.db.updateTable('wallets').set({ balance_micros: 5_000_000 }).where('workspace_id', '=', user.workspaceId).execute();
    const run = await t.request({ method: 'POST', url: `/v1/schedules/${created.id}/run`, ...as(user) });
    assert.equal(run.statusCode, 200, run.body);
    assert.equal(run.json().status, 'dispatched');
    assert.equal(run.json().late, false);
    assert.equal(run.json().dispatched_at, clock.now().toISOString());
    const call = await t.platform.db.selectFrom('calls').selectAll().where('id', '=', run.json().call_id).executeTakeFirstOrThrow();
    assert.equal(call.schedule_id, created.id);
    assert.deepEqual(call.variables, { v: 'x' });
    const twice = await t.request({ method: 'POST', url: `/v1/schedules/${created.id}/run`, ...as(user) });
    assert.equal(twice.statusCode, 409);
    assert.equal(twice.json().code, 'invalid_state');
    clock.advance(3600_000);
    assert.deepEqual(await fire(created.id), [], 'the worker does not fire it again');
  });

  it('becomes failed with the reason when the call cannot be placed at its time', async () => {
    const user = await signUp(t);
    const dnc = await schedule(user, { to: '+15550100778' });
    const agent = await createCallAgent(t, user, { name: 'Gone' });
    const deleted = await schedule(user, { agent_id: agent.id });
    await t.request({ method: 'POST', url: '/v1/dnc', ...as(user), payload: { number: '+15550100778' } });
    const removed = await t.request({ method: 'DELETE', url: `/v1/agents/${agent.id}`, ...as(user) });
    assert.ok(removed.statusCode < 300, removed.body);
    const fine = await schedule(user, { to: '+15550100779' });
    const poor = await signUp(t);
    const broke = await schedule(poor);
    await t.platform.db.updateTable('wallets').set({ balance_micros: -1 }).where('workspace_id', '=', poor.workspaceId).execute();
    clock.advance(61_000);
    const fired = await t.modules.schedules.worker.runDueOnce();
    assert.ok([dnc.id, deleted.id, broke.id, fine.id].every((id) => fired.some((row) => row.id === id)), 'fired in one batch');
    // The others' refusals do not hold back a schedule that can be placed.
    assert.equal((await get(user, fine.id)).status, 'dispatched');
    for (const [owner, id, code] of [
      [user, dnc.id, 'do_not_call'],
      [user, deleted.id, 'agent_not_found'],
      [poor, broke.id, 'insufficient_balance'],
    ] as const) {
      const row = await get(owner, id);
      assert.equal(row.status, 'failed', JSON.stringify(row));
      assert.equal(row.error.code, code);
      assert.ok(row.error.message.length > 0);
      assert.equal(row.call_id, null);
      assert.equal(row.dispatched_at, clock.now().toISOString());
    }
    const calls = await t.platform.db.selectFrom('calls').select('id').where('schedule_id', 'in', [dnc.id, deleted.id, broke.id]).execute();
    assert.deepEqual(calls, []);
    const cancel = await t.request({ method: 'DELETE', url: `/v1/schedules/${dnc.id}`, ...as(user) });
    assert.equal(cancel.statusCode, 409);
  });

  it('a schedule due while no worker ran fires when the worker starts, late', async () => {
    const user = await signUp(t);
    const created = await schedule(user);
    // The server was down past its time.
    clock.advance(30 * 60_000);
    await t.modules.schedules.worker.start();
    try {
      const deadline = Date.now() + 20_000;
      let row = await get(user, created.id);
      while (row.status === 'scheduled' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        row = await get(user, created.id);
      }
      assert.equal(row.status, 'dispatched');
      assert.equal(row.late, true);
      assert.ok(row.dispatched_at);
    } finally {
      await t.modules.schedules.worker.stop();
    }
  });
});

describe('schedule worker wake-up', () => {
  it('fires a schedule at its time by the timer armed for it, with polling too slow to find it', async (ctx) => {
    const live = await buildTestApp({ t: ctx });
    const user = await signUp(live);
    const agent = await createCallAgent(live, user);
    const res = await live.request({ method: 'POST', url: '/v1/schedules', ...as(user), payload: { agent_id: agent.id, to: '+15550100200', scheduled_at: new Date(Date.now() + 1500).toISOString() } });
    assert.equal(res.statusCode, 201, res.body);
    // Its own worker with a one-hour poll: only the timer armed for the next due schedule wakes it.
    const worker = createScheduleWorker({ database: live.platform.database, clock: live.platform.clock, logger: live.platform.logger, dispatcher: live.modules.schedules.dispatcher, repo: createSchedulesRepo(), pollIntervalMs: 3600_000 });
    await worker.start();
    try {
      const deadline = Date.now() + 30_000;
      let row = res.json();
      while (row.status === 'scheduled' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        row = (await live.request({ method: 'GET', url: `/v1/schedules/${row.id}`, ...as(user) })).json();
      }
      assert.equal(row.status, 'dispatched');
      assert.equal(row.late, false);
    } finally {
      await worker.stop();
    }
  });
});

const scheduleOf = async (app: typeof t, owner: TestUser) => {
  const agent = await createCallAgent(app, owner);
  const res = await app.request({ method: 'POST', url: '/v1/schedules', ...as(owner), payload: { agent_id: agent.id, to: '+15550100200', scheduled_at: new Date(clock.now().getTime() + 3600_000).toISOString() } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; agent_id: string };
};

securitySuite('schedules', async () => t, {
  'POST /v1/schedules': {
    scope: 'write',
    prepare: async (app, owner) => ({
      method: 'POST',
      url: '/v1/schedules',
      payload: { agent_id: (await createCallAgent(app, owner)).id, to: '+15550100200', scheduled_at: new Date(clock.now().getTime() + 3600_000).toISOString() },
    }),
  },
  'GET /v1/schedules': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/schedules' }) },
  'GET /v1/schedules/{id}': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/schedules/${(await scheduleOf(app, owner)).id}` }) },
  'PATCH /v1/schedules/{id}': {
    scope: 'write',
    ownedResource: true,
    prepare: async (app, owner) => ({ method: 'PATCH', url: `/v1/schedules/${(await scheduleOf(app, owner)).id}`, payload: { variables: { x: 'y' } } }),
  },
  'DELETE /v1/schedules/{id}': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'DELETE', url: `/v1/schedules/${(await scheduleOf(app, owner)).id}` }) },
  'POST /v1/schedules/{id}/run': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'POST', url: `/v1/schedules/${(await scheduleOf(app, owner)).id}/run` }) },
});
