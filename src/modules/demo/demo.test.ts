import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import type { AppError } from '../../platform/errors.ts';
import { bootstrapDemo, DEMO_MAX_DURATION_SECONDS, findDemo } from './bootstrap.ts';
import { createDemoService } from './service.ts';

const TERMINAL = new Set(['completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled']);
const t = await buildTestApp({ env: { DEMO_CREDIT_USD: '2' } });
const bootstrap = (app: TestApp = t) => bootstrapDemo({ db: app.platform.db, clock: app.platform.clock, config: app.platform.config });
const post = (url: string, payload: unknown, remoteAddress?: string) => t.request({ method: 'POST', url, payload: payload as object, remoteAddress });

async function demoState(app: TestApp = t) {
  const { db } = app.platform;
  const ids = await findDemo(db);
  assert.ok(ids, 'the demo exists');
  const setups = await db.selectFrom('demo_setup').selectAll().execute();
  const agents = await db.selectFrom('agents').selectAll().where('workspace_id', '=', ids.workspaceId).execute();
  const wallet = await db.selectFrom('wallets').selectAll().where('workspace_id', '=', ids.workspaceId).executeTakeFirstOrThrow();
  const credits = await db.selectFrom('wallet_transactions').selectAll().where('workspace_id', '=', ids.workspaceId).where('type', '=', 'adjustment').execute();
  return { ids, setups, agents, balance: Number(wallet.balance_micros), credits };
}

async function runUntilEnded(callId: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    await t.modules.calls.worker.runDueOnce();
    const call = await t.platform.db.selectFrom('calls').selectAll().where('id', '=', callId).executeTakeFirstOrThrow();
    if (TERMINAL.has(call.status)) return call;
    if (Date.now() > deadline) assert.fail(`call ${callId} still ${call.status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('demo bootstrap', () => {
  it('made the demo workspace, its agent (120 s) and its credit when the app was built', async () => {
    const state = await demoState();
    assert.equal(state.setups.length, 1);
    assert.equal(state.agents.length, 1);
    assert.equal(state.agents[0]?.id, state.ids.agentId);
    assert.equal(state.agents[0]?.max_duration_seconds, DEMO_MAX_DURATION_SECONDS);
    assert.equal(state.balance, 2_000_000);
    assert.equal(state.credits.length, 1);
    const members = await t.platform.db.selectFrom('memberships').select('user_id').where('workspace_id', '=', state.ids.workspaceId).execute();
    assert.equal(members.length, 0, 'nobody is a member of the demo workspace');
  });

  it('is idempotent: run twice at once from scratch, or again later, it makes one workspace, one agent, one credit', async () => {
    const before = await demoState();
    await t.platform.db.deleteFrom('workspaces').where('id', '=', before.ids.workspaceId).execute();
    assert.equal(await findDemo(t.platform.db), undefined, 'the setup row goes with its workspace');

    // Two start-ups at once: on PostgreSQL each transaction has its own pool connection, so the
    // second waits on the first's demo_setup row; PGlite runs them one after the other.
    const [a, b] = await Promise.all([bootstrap(), bootstrap()]);
    assert.deepEqual(a, b);
    const after = await demoState();
    assert.deepEqual(after.ids, a);
    assert.equal(after.setups.length, 1);
    assert.equal(after.agents.length, 1);
    assert.equal(after.credits.length, 1);
    assert.equal(after.balance, 2_000_000);
    const workspaces = await t.platform.db.selectFrom('workspaces').select('id').where('name', '=', 'Demo').where('created_by', 'is', null).execute();
    assert.equal(workspaces.length, 1);

    assert.deepEqual(await bootstrap(), a);
    const again = await demoState();
    assert.equal(again.credits.length, 1, 'a full wallet is not credited again');
  });

  it('tops the wallet up to DEMO_CREDIT_USD at start-up when it was spent', async () => {
    const { ids } = await demoState();
    await t.platform.db.updateTable('wallets').set({ balance_micros: 500_000 }).where('workspace_id', '=', ids.workspaceId).execute();
    await bootstrap();
    const state = await demoState();
    assert.equal(state.balance, 2_000_000);
    assert.equal(Number(state.credits.at(-1)?.amount_micros), 1_500_000);
  });
});

describe('POST /v1/demo/call', () => {
  it('places a sandbox call with the demo agent that reaches a terminal state and is paid by the demo wallet', async () => {
    const { ids, balance } = await demoState();
    const res = await post('/v1/demo/call', { phone: '+1 555 010 0200' });
    assert.equal(res.statusCode, 202, res.body);
    const body = res.json();
    assert.match(body.call_id, /^call_/);
    assert.equal(body.status, 'queued');
    assert.equal(body.sandbox, true);
    assert.equal(body.max_duration_seconds, 120);
    const call = await runUntilEnded(body.call_id);
    assert.equal(call.status, 'completed');
    assert.equal(call.workspace_id, ids.workspaceId);
    assert.equal(call.agent_id, ids.agentId);
    assert.equal(call.to_number, '+15550100200');
    assert.equal(call.direction, 'outbound');
    assert.deepEqual(call.metadata, { demo: true });
    assert.ok((call.transcript as unknown[]).length > 1, 'the agent and the simulated callee spoke');
    const after = await demoState();
    assert.ok(after.balance < balance, 'the demo wallet paid for the call');
  });

  it('respects the demo workspace\'s do-not-call list (422) and refuses a bad number naming phone', async () => {
    const { ids } = await demoState();
    await t.platform.db.insertInto('dnc_numbers').values({ workspace_id: ids.workspaceId, number: '+15550100321', reason: 'test', created_at: new Date() }).execute();
    const refused = await post('/v1/demo/call', { phone: '+15550100321' });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().code, 'do_not_call');
    const before = await t.platform.db.selectFrom('calls').select('id').where('to_number', '=', '+15550100321').execute();
    assert.equal(before.length, 0);
    const bad = await post('/v1/demo/call', { phone: 'call me maybe' });
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().errors[0].path, 'phone');
  });

  it('refuses with 402 and a clear message when the demo wallet is empty', async () => {
    const { ids } = await demoState();
    await t.platform.db.updateTable('wallets').set({ balance_micros: 0 }).where('workspace_id', '=', ids.workspaceId).execute();
    const res = await post('/v1/demo/call', { phone: '+15550100200' });
    assert.equal(res.statusCode, 402, res.body);
    assert.equal(res.json().code, 'insufficient_balance');
    assert.match(res.json().detail, /demo's call budget is used up/);
    await bootstrap();
    assert.equal((await post('/v1/demo/call', { phone: '+15550100200' })).statusCode, 202, 'funded again after a start-up');
  });
});

describe('demo call retries', () => {
  it('replays the answer for the same Idempotency-Key from the same IP instead of placing a second call', async () => {
    const headers = { 'idempotency-key': `demo-${Math.random().toString(36).slice(2)}` };
    const send = () => t.request({ method: 'POST', url: '/v1/demo/call', payload: { phone: '+15550100201' }, headers, remoteAddress: '192.0.2.77' });
    const first = await send();
    assert.equal(first.statusCode, 202, first.body);
    const second = await send();
    assert.equal(second.statusCode, 202);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.json().call_id, first.json().call_id);
    assert.equal((await t.platform.db.selectFrom('calls').select('id').where('to_number', '=', '+15550100201').execute()).length, 1);
    await t.platform.db.updateTable('calls').set({ status: 'canceled' }).where('id', '=', first.json().call_id).execute();
  });
});

describe('demo calls with a real telephony provider', () => {
  it('call from the demo workspace\'s first phone number, and are 503 while it has none', async () => {
    const { ids } = await demoState();
    const service = createDemoService({
      db: t.platform.db,
      calls: t.modules.calls.service,
      telephony: { simulated: false, ownsCallerIds: true },
      bootstrap: () => bootstrap(),
      engineFor: () => assert.fail('no chat here'),
    });
    await assert.rejects(service.call('+15550100200'), (error: AppError) => error.code === 'service_unavailable' && /no phone number/.test(error.message));
    const now = new Date();
    await t.platform.db
      .insertInto('phone_numbers')
      .values({ id: 'pn_00000000000000000000demo01', workspace_id: ids.workspaceId, number: '+15550100777', country: 'US', provider: 'twilio', provider_number_id: null, capabilities: JSON.stringify({ voice: true, sms: false }), agent_id: null, label: null, monthly_cost_micros: 0, created_at: now, updated_at: now })
      .execute();
    const placed = await service.call('+15550100200');
    assert.equal(placed.sandbox, false);
    const call = await t.platform.db.selectFrom('calls').selectAll().where('id', '=', placed.call_id).executeTakeFirstOrThrow();
    assert.equal(call.from_number, '+15550100777');
    assert.equal(call.agent_id, ids.agentId);
    await t.platform.db.updateTable('calls').set({ status: 'canceled' }).where('id', '=', placed.call_id).execute();
  });
});

describe('POST /v1/demo/chat', () => {
  it('answers with the demo agent through the dialogue engine, keeping no conversation', async () => {
    const { ids } = await demoState();
    const res = await post('/v1/demo/chat', { message: 'What are your opening hours?' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(typeof body.reply, 'string');
    assert.ok(body.reply.length > 0);
    assert.equal(typeof body.ended, 'boolean');
    const kept = await t.platform.db.selectFrom('agent_conversations').select('id').where('agent_id', '=', ids.agentId).execute();
    assert.equal(kept.length, 0);
  });

  it('refuses hostile input with 4xx problem+json', async () => {
    for (const payload of [{ message: '' }, { message: 'a\u0000b' }, { message: 42 }, { message: 'x'.repeat(1001) }, { message: 'hi', conversation_id: 'conv_x' }, {}]) {
      const res = await post('/v1/demo/chat', payload);
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload).slice(0, 60)}: ${res.body}`);
      assert.match(res.headers['content-type'] as string, /^application\/problem\+json/);
    }
    const huge = await post('/v1/demo/chat', { message: 'x'.repeat(50_000) });
    assert.equal(huge.statusCode, 413);
  });
});

describe('demo rate limit', () => {
  it('allows 3 demo requests a minute per IP (call and chat together); the 4th is 429; other public routes keep their own bucket', async (tc) => {
    const limited = await buildTestApp({ t: tc, env: { RATE_LIMIT_DEMO_PER_MIN: '3', RATE_LIMIT_IP_PER_MIN: '30' } });
    const send = (url: string, payload: object, remoteAddress = '198.51.100.23') => limited.request({ method: 'POST', url, payload, remoteAddress });
    const first = await send('/v1/demo/chat', { message: 'Hello?' });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['ratelimit-limit'], '3');
    assert.equal((await send('/v1/demo/call', { phone: '+15550100200' })).statusCode, 202);
    assert.equal((await send('/v1/demo/chat', { message: 'And then?' })).statusCode, 200);
    const fourth = await send('/v1/demo/call', { phone: '+15550100200' });
    assert.equal(fourth.statusCode, 429);
    assert.equal(fourth.json().code, 'rate_limited');
    assert.ok(Number(fourth.headers['retry-after']) > 0);
    assert.equal((await send('/v1/demo/chat', { message: 'Hello?' }, '198.51.100.24')).statusCode, 200, 'another IP has its own bucket');
    assert.equal((await send('/v1/events', { name: 'demo_blocked' })).statusCode, 202, 'the public bucket is separate');
    const health = await limited.request({ method: 'GET', url: '/v1/health', remoteAddress: '198.51.100.23' });
    assert.equal(health.statusCode, 200);
    assert.equal(health.headers['ratelimit-limit'], undefined, '/v1/health is not limited');
  });
});
