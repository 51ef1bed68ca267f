import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { newId } from '../../platform/ids.ts';
import { callCost } from './journal.ts';
import { as, createCallAgent, outboundCallRow, placeCall, waitForEnd } from './test-helpers.ts';

// What a call costs and who may keep it alive: billed seconds are started seconds (callCost); a
// live call ends before its cost passes the balance (whole affordable seconds only); a call whose
// process died is billed up to its last lease renewal, not its lease expiry (the
// sweep in ownership.ts), read back over HTTP with the wallet's ledger; and a lease is renewed
// only by its holder (journal.renew), so a process that lost a call cannot take it back.

const t = await buildTestApp();
const RATE_MICROS = Math.round(t.platform.config.pricing.callPerMinUsd * 1e6);

describe('callCost: billed per started second', () => {
  const cases: Array<[number, number]> = [[0, 0], [-5, 0], [1, 1], [400, 1], [999, 1], [1000, 1], [1001, 2], [1200, 2], [1499, 2], [1500, 2], [1999, 2], [2000, 2], [59_001, 60]];
  for (const [ms, seconds] of cases) {
    it(`${ms} ms → ${seconds} s`, () => {
      const { billedSeconds, costMicros } = callCost(ms, 90_000);
      assert.equal(billedSeconds, seconds);
      assert.equal(costMicros, Math.round((seconds * 90_000) / 60));
    });
  }
});

/** A live call written straight into the table (a provider other than the sandbox: its wall time is its time), held by `holder`. */
async function insertLiveCall(t: TestApp, user: TestUser, input: { answeredAt: Date; lastRenewedAt: Date; leaseExpiresAt: Date; holder: string; provider?: string }) {
  const agent = await createCallAgent(t, user);
  const id = newId('call');
  await t.platform.db
    .insertInto('calls')
    .values({
      ...outboundCallRow(user, agent.id, id, input.answeredAt),
      status: 'in_progress',
      provider: input.provider ?? 'twilio',
      lease_holder: input.holder,
      lease_expires_at: input.leaseExpiresAt,
      last_renewed_at: input.lastRenewedAt,
      updated_at: input.lastRenewedAt,
    })
    .execute();
  await t.platform.db.insertInto('call_status_events').values({ call_id: id, seq: 1, status: 'in_progress', at: input.answeredAt }).execute();
  return id;
}

describe('a live call and the balance', () => {
  it('ends within the whole seconds the balance pays for: 5.33 s worth bills 5 s and leaves the rest', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const perSecond = RATE_MICROS / 60;
    const balance = Math.round(perSecond * 5 + perSecond / 3);
    await t.platform.db.updateTable('wallets').set({ balance_micros: balance }).where('workspace_id', '=', user.workspaceId).execute();
    const call = await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: [] } })).id);
    assert.equal(call.end_reason, 'insufficient_balance');
    assert.equal(call.duration_seconds, 5);
    assert.ok(call.duration_ms > 4000 && call.duration_ms <= 5000, `ended after ${call.duration_ms} ms`);
    const wallet = (await t.request({ method: 'GET', url: '/v1/wallet', ...as(user) })).json();
    assert.equal(Math.round(wallet.balance_usd * 1e6), balance - Math.round((5 * RATE_MICROS) / 60), 'never below zero');
  });
});

describe('a call whose process died', () => {
  it('is billed up to its last renewal in started seconds (1.2 s → 2 s), not up to its lease expiry: call, ledger and wallet agree', async () => {
    const user = await signUp(t);
    const balanceBefore = (await t.request({ method: 'GET', url: '/v1/wallet', ...as(user) })).json().balance_usd as number;
    const now = t.platform.clock.now().getTime();
    const answeredAt = new Date(now - 60_000);
    const lastRenewedAt = new Date(answeredAt.getTime() + 1200);
    const id = await insertLiveCall(t, user, { answeredAt, lastRenewedAt, leaseExpiresAt: new Date(lastRenewedAt.getTime() + 30_000), holder: 'dead-host:1:00000000' });

    await t.modules.calls.worker.sweepOnce();

    const call = (await t.request({ method: 'GET', url: `/v1/calls/${id}`, ...as(user) })).json();
    assert.deepEqual([call.status, call.end_reason, call.error?.code], ['failed', 'media_error', 'runtime_lost']);
    assert.equal(call.duration_ms, 1200);
    assert.equal(call.duration_seconds, 2);
    const cost = Math.round((2 * RATE_MICROS) / 60);
    assert.equal(call.cost_usd, cost / 1e6);
    const ledger = await t.platform.db.selectFrom('wallet_transactions').select(['type', 'amount_micros']).where('reference_id', '=', id).execute();
    assert.deepEqual(ledger.map((r) => [r.type, Number(r.amount_micros)]), [['call', -cost]]);
    const balanceAfter = (await t.request({ method: 'GET', url: '/v1/wallet', ...as(user) })).json().balance_usd as number;
    assert.equal(Math.round((balanceBefore - balanceAfter) * 1e6), cost);
  });

  it('is billed its length on its own clock at the last renewal: a sandbox call, 31 s of call in 1.2 s of wall (not 1.2 s × SANDBOX_SPEED 20)', async () => {
    const user = await signUp(t);
    const now = t.platform.clock.now().getTime();
    const answeredAt = new Date(now - 60_000);
    const lastRenewedAt = new Date(answeredAt.getTime() + 1200);
    const holder = 'dead-host:2:00000000';
    const id = await insertLiveCall(t, user, { answeredAt, lastRenewedAt, leaseExpiresAt: new Date(now + 30_000), holder, provider: 'sandbox' });
    await t.modules.calls.journal.renew(holder, [{ id, elapsedMs: 31_000 }], 30_000);
    await t.platform.db.updateTable('calls').set({ lease_expires_at: new Date(now - 1000) }).where('id', '=', id).execute();

    await t.modules.calls.worker.sweepOnce();

    const call = (await t.request({ method: 'GET', url: `/v1/calls/${id}`, ...as(user) })).json();
    assert.deepEqual([call.status, call.error?.code], ['failed', 'runtime_lost']);
    assert.equal(call.duration_ms, 31_000, 'its own clock, not the wall time times SANDBOX_SPEED');
    assert.equal(call.cost_usd, Math.round((31 * RATE_MICROS) / 60) / 1e6);
  });

  it('is not ended while its lease runs (renewed a moment ago)', async () => {
    const user = await signUp(t);
    const now = t.platform.clock.now().getTime();
    const id = await insertLiveCall(t, user, { answeredAt: new Date(now - 10_000), lastRenewedAt: new Date(now - 1000), leaseExpiresAt: new Date(now + 29_000), holder: 'busy-host:1:00000000' });
    await t.modules.calls.worker.sweepOnce();
    assert.equal((await t.request({ method: 'GET', url: `/v1/calls/${id}`, ...as(user) })).json().status, 'in_progress');
  });
});

describe('lease fence: journal.renew', () => {
  it('a holder that lost the call cannot extend the lease another holder took; the holder can', async () => {
    const user = await signUp(t);
    const now = t.platform.clock.now().getTime();
    const expires = new Date(now + 5000);
    const id = await insertLiveCall(t, user, { answeredAt: new Date(now - 10_000), lastRenewedAt: new Date(now - 1000), leaseExpiresAt: expires, holder: 'new-host:2:bbbbbbbb' });
    const lease = () => t.platform.db.selectFrom('calls').select(['lease_holder', 'lease_expires_at']).where('id', '=', id).executeTakeFirstOrThrow();

    assert.deepEqual(await t.modules.calls.journal.renew('old-host:1:aaaaaaaa', [{ id, elapsedMs: 99_000 }], 60_000), []);
    const kept = await lease();
    assert.equal(kept.lease_holder, 'new-host:2:bbbbbbbb');
    assert.equal(new Date(kept.lease_expires_at as Date).getTime(), expires.getTime(), 'the lost holder did not extend it');

    const elapsed = async () => (await t.platform.db.selectFrom('calls').select('live_elapsed_ms').where('id', '=', id).executeTakeFirstOrThrow()).live_elapsed_ms;
    assert.equal(await elapsed(), null, 'nor wrote its length');

    const renewed = await t.modules.calls.journal.renew('new-host:2:bbbbbbbb', [{ id, elapsedMs: 9000 }], 60_000);
    assert.deepEqual(renewed.map((r) => r.id), [id]);
    assert.ok(new Date((await lease()).lease_expires_at as Date).getTime() > expires.getTime());
    assert.equal(await elapsed(), 9000);
  });
});
