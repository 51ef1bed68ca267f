import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { idsByPage } from '../../../test/support/paging.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { as, createCallAgent, placeCall, waitForEnd } from '../calls/test-helpers.ts';
import { createWalletRepo } from './repo.ts';

// The wallet, its ledger, usage and pricing: the balance always equals the ledger sum (also under
// 100 concurrent debits and credits, on PGlite and on PostgreSQL), the low-balance event is sent
// once per 24 h, usage adds up by day, agent and kind.

const t = await buildTestApp({ env: { SANDBOX_SPEED: '50' } });
const repo = createWalletRepo({ events: t.platform.events });

async function ledgerSum(workspaceId: string) {
  const rows = await t.platform.db.selectFrom('wallet_transactions').select(['amount_micros']).where('workspace_id', '=', workspaceId).execute();
  return rows.reduce((sum, r) => sum + Number(r.amount_micros), 0);
}
async function balance(workspaceId: string) {
  return Number((await t.platform.db.selectFrom('wallets').select('balance_micros').where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow()).balance_micros);
}
async function lowBalanceEvents(workspaceId: string) {
  return t.platform.db.selectFrom('webhook_events').select(['payload']).where('workspace_id', '=', workspaceId).where('type', '=', 'wallet.low_balance').execute();
}
const debit = (user: TestUser, usd: number, now = new Date()) =>
  t.platform.db.transaction().execute((tx) => repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'call', amountMicros: -Math.round(usd * 1e6), description: 'test debit', now }));

describe('wallet', () => {
  it('starts with the signup credit as an adjustment; GET shows balance, threshold and auto-recharge', async () => {
    const user = await signUp(t);
    const wallet = (await t.request({ method: 'GET', url: '/v1/wallet', ...as(user) })).json();
    assert.deepEqual({ ...wallet, updated_at: undefined }, {
      balance_usd: 10,
      threshold_usd: 5,
      currency: 'USD',
      auto_recharge: { enabled: false, amount_usd: 20, payment_method: null },
      updated_at: undefined,
    });
    const ledger = (await t.request({ method: 'GET', url: '/v1/wallet/transactions', ...as(user) })).json();
    assert.equal(ledger.data.length, 1);
    assert.deepEqual([ledger.data[0].type, ledger.data[0].amount_usd, ledger.data[0].balance_after_usd], ['adjustment', 10, 10]);
  });

  it('PATCH sets the threshold and auto-recharge (merged); enabling it needs a payment method', async () => {
    const user = await signUp(t);
    const refused = await t.request({ method: 'PATCH', url: '/v1/wallet', ...as(user), payload: { auto_recharge: { enabled: true } } });
    assert.equal(refused.statusCode, 422);
    assert.equal(refused.json().errors[0].path, 'auto_recharge.payment_method');
    assert.match(refused.json().errors[0].message, /required to enable auto-recharge/);
    const set = await t.request({ method: 'PATCH', url: '/v1/wallet', ...as(user), payload: { threshold_usd: 7.5, auto_recharge: { enabled: true, amount_usd: 25, payment_method: 'pm_card_visa' } } });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual([set.json().threshold_usd, set.json().auto_recharge], [7.5, { enabled: true, amount_usd: 25, payment_method: 'pm_card_visa' }]);
    const merged = await t.request({ method: 'PATCH', url: '/v1/wallet', ...as(user), payload: { auto_recharge: { enabled: false } } });
    assert.deepEqual(merged.json().auto_recharge, { enabled: false, amount_usd: 25, payment_method: 'pm_card_visa' });
    for (const payload of [{}, { threshold_usd: -1 }, { auto_recharge: { amount_usd: 1 } }, { auto_recharge: { payment_method: 'card 4242' } }, { balance_usd: 1000 }]) {
      assert.equal((await t.request({ method: 'PATCH', url: '/v1/wallet', ...as(user), payload })).statusCode, 422, JSON.stringify(payload));
    }
    assert.equal((await t.request({ method: 'GET', url: '/v1/wallet', ...as(user) })).json().balance_usd, 10, 'the balance is never set by PATCH');
  });

  it('100 concurrent debits and credits keep the balance equal to the ledger sum', async () => {
    const user = await signUp(t);
    const now = new Date();
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        t.platform.db.transaction().execute((tx) =>
          repo.applyEntry(tx, { workspaceId: user.workspaceId, type: i % 2 ? 'topup' : 'call', amountMicros: i % 2 ? 1_250_000 + i : -(730_000 + i), description: `race ${i}`, now }),
        ),
      ),
    );
    const sum = await ledgerSum(user.workspaceId);
    assert.equal(await balance(user.workspaceId), sum);
    const expected = [...Array(100).keys()].reduce((total, i) => total + (i % 2 ? 1_250_000 + i : -(730_000 + i)), 10_000_000);
    assert.equal(sum, expected, 'every entry applied once');
    const rows = await t.platform.db.selectFrom('wallet_transactions').select(['balance_after_micros']).where('workspace_id', '=', user.workspaceId).execute();
    assert.equal(new Set(rows.map((r) => Number(r.balance_after_micros))).size, rows.length, 'each row saw its own balance: no lost update');
  });

  it('sends wallet.low_balance when a debit crosses below the threshold, at most once per 24 h', async () => {
    const user = await signUp(t);
    const put = await t.request({ method: 'PUT', url: '/v1/webhooks', ...as(user), payload: { webhook_url: 'https://hooks.example.test/wallet' } });
    assert.equal(put.statusCode, 200, put.body);
    await debit(user, 4); // 10 → 6: above the threshold of 5
    assert.equal((await lowBalanceEvents(user.workspaceId)).length, 0);
    await Promise.all([debit(user, 2), debit(user, 0.5)]); // → 3.5: crossed once, by whichever came first
    const events = await lowBalanceEvents(user.workspaceId);
    assert.equal(events.length, 1);
    assert.equal(JSON.parse(events[0].payload).data.threshold_usd, 5);
    await t.platform.db.transaction().execute((tx) => repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'topup', amountMicros: 10_000_000, description: 'top-up', now: new Date() }));
    await debit(user, 9); // crosses again within 24 h: no second event
    assert.equal((await lowBalanceEvents(user.workspaceId)).length, 1);
    await t.platform.db.transaction().execute((tx) => repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'topup', amountMicros: 10_000_000, description: 'top-up', now: new Date() }));
    await debit(user, 10, new Date(Date.now() + 25 * 3600 * 1000)); // a day later: sent again
    assert.equal((await lowBalanceEvents(user.workspaceId)).length, 2);
  });

  it('wallet.low_balance at the threshold exactly: a debit landing on it sends nothing, the next micro-dollar below does', async () => {
    const user = await signUp(t);
    const put = await t.request({ method: 'PUT', url: '/v1/webhooks', ...as(user), payload: { webhook_url: 'https://hooks.example.test/wallet' } });
    assert.equal(put.statusCode, 200, put.body);
    const now = new Date();
    await t.platform.db.transaction().execute((tx) => repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'call', amountMicros: -5_000_000, description: 'to the threshold', now }));
    assert.equal((await lowBalanceEvents(user.workspaceId)).length, 0, '10 → 5: at the threshold of 5, not below');
    await t.platform.db.transaction().execute((tx) => repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'call', amountMicros: -1, description: 'below', now }));
    const events = await lowBalanceEvents(user.workspaceId);
    assert.equal(events.length, 1, '5 → 4.999999 crossed below');
    assert.equal(JSON.parse(events[0].payload).data.balance_usd, 4.999999);
  });

  it('wallet.low_balance again 24 h after the last one to the millisecond, not before', async () => {
    const user = await signUp(t);
    const put = await t.request({ method: 'PUT', url: '/v1/webhooks', ...as(user), payload: { webhook_url: 'https://hooks.example.test/wallet' } });
    assert.equal(put.statusCode, 200, put.body);
    const first = new Date('2026-03-01T12:00:00.000Z');
    const topUp = (now: Date) =>
      t.platform.db.transaction().execute((tx) => repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'topup', amountMicros: 6_000_000, description: 'top-up', now }));
    await debit(user, 6, first); // 10 → 4
    assert.equal((await lowBalanceEvents(user.workspaceId)).length, 1);
    const dayLater = first.getTime() + 24 * 3600 * 1000;
    await topUp(new Date(dayLater - 1));
    await debit(user, 6, new Date(dayLater - 1)); // crossed again 1 ms short of 24 h
    assert.equal((await lowBalanceEvents(user.workspaceId)).length, 1, 'not before 24 h');
    await topUp(new Date(dayLater));
    await debit(user, 6, new Date(dayLater)); // crossed again at 24 h exactly
    assert.equal((await lowBalanceEvents(user.workspaceId)).length, 2, 'at 24 h');
  });

  it('a wallet repo without an event emitter (the signup credit) crosses below the threshold without an event; a debit already below is no crossing', async () => {
    const user = await signUp(t);
    const put = await t.request({ method: 'PUT', url: '/v1/webhooks', ...as(user), payload: { webhook_url: 'https://hooks.example.test/wallet' } });
    assert.equal(put.statusCode, 200, put.body);
    const silent = createWalletRepo();
    const row = await t.platform.db
      .transaction()
      .execute((tx) => silent.applyEntry(tx, { workspaceId: user.workspaceId, type: 'call', amountMicros: -6_000_000, description: 'silent debit', now: new Date() }));
    assert.equal(Number(row.balance_after_micros), 4_000_000);
    assert.match(row.id, /^txn_/);
    assert.equal((await lowBalanceEvents(user.workspaceId)).length, 0);
    await debit(user, 1); // 4 → 3: below already, never notified
    assert.equal((await lowBalanceEvents(user.workspaceId)).length, 0);
  });

  it('usage adds up what calls and numbers cost, by day, agent and kind', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const call = await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['Goodbye!'] } });
    const ended = await waitForEnd(t, user, call.id);
    assert.ok(ended.cost_usd > 0);
    const bought = await t.request({ method: 'POST', url: '/v1/phone-numbers/buy', ...as(user), payload: { number: '+15550142000' } });
    assert.equal(bought.statusCode, 201, bought.body);
    const usage = (await t.request({ method: 'GET', url: '/v1/usage', ...as(user) })).json();
    assert.deepEqual([usage.by_day[0].date, usage.by_day.at(-1).date], [usage.from.slice(0, 10), usage.to.slice(0, 10)], 'every UTC day of the last 30 days');
    const kinds = Object.fromEntries(usage.by_kind.map((k: { kind: string; amount_usd: number; count: number }) => [k.kind, [k.amount_usd, k.count]]));
    assert.deepEqual(kinds, { call: [ended.cost_usd, 1], phone_number: [1.15, 1] });
    assert.deepEqual(usage.by_agent, [{ agent_id: agent.id, amount_usd: ended.cost_usd, calls: 1, billed_seconds: ended.duration_seconds }]);
    const dayTotal = usage.by_day.reduce((sum: number, d: { amount_usd: number }) => sum + d.amount_usd, 0);
    assert.equal(Math.round(dayTotal * 1e6), Math.round(usage.total_usd * 1e6));
    assert.equal(Math.round(usage.total_usd * 1e6), Math.round((ended.cost_usd + 1.15) * 1e6));
    const empty = (await t.request({ method: 'GET', url: '/v1/usage?from=2020-01-01T00:00:00Z&to=2020-01-03T00:00:00Z', ...as(user) })).json();
    assert.deepEqual([empty.total_usd, empty.by_day.length, empty.by_kind], [0, 2, []]);
    assert.equal((await t.request({ method: 'GET', url: '/v1/usage?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', ...as(user) })).statusCode, 422);
  });

  it('usage counts spending only (calls, voice sessions, numbers), in USD, its agents most expensive first', async () => {
    const user = await signUp(t);
    const agents = [await createCallAgent(t, user), await createCallAgent(t, user), await createCallAgent(t, user)];
    const ended: Array<Awaited<ReturnType<typeof waitForEnd>>> = [];
    for (const agent of agents) {
      const call = await placeCall(t, user, { agent_id: agent.id, to: '+15550100201', simulation: { caller_script: ['Goodbye!'] } });
      ended.push(await waitForEnd(t, user, call.id));
    }
    // Each call's cost plus one more charge on the same call: the first agent spent the least, the
    // last the most, and the middle one more than the first, so neither the creation order nor its
    // reverse is the order by amount.
    const extra = [0.5, 3, 1.5];
    const now = new Date();
    await t.platform.db.transaction().execute(async (tx) => {
      for (const [i, call] of ended.entries()) await repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'call', amountMicros: -extra[i] * 1e6, description: 'more', referenceId: call.id, now });
      await repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'voice_session', amountMicros: -0.25e6, description: 'web call', now });
      // Not spending: a manual adjustment taken back, a top-up, a refund of a call.
      await repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'adjustment', amountMicros: -2e6, description: 'correction', now });
      await repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'topup', amountMicros: 20e6, description: 'top-up', now });
      await repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'call', amountMicros: 0.1e6, description: 'refund', referenceId: ended[0].id, now });
    });
    const usage = (await t.request({ method: 'GET', url: '/v1/usage', ...as(user) })).json();
    assert.equal(usage.currency, 'USD');
    const spentOn = ended.map((call, i) => Math.round((call.cost_usd + extra[i]) * 1e6) / 1e6);
    assert.deepEqual(
      usage.by_agent.map((a: { agent_id: string; amount_usd: number; calls: number }) => [a.agent_id, a.amount_usd, a.calls]),
      [[agents[1].id, spentOn[1], 2], [agents[2].id, spentOn[2], 2], [agents[0].id, spentOn[0], 2]],
    );
    const kinds = Object.fromEntries(usage.by_kind.map((k: { kind: string; amount_usd: number; count: number }) => [k.kind, [k.amount_usd, k.count]]));
    const callsUsd = Math.round(spentOn.reduce((a, b) => a + b, 0) * 1e6) / 1e6;
    assert.deepEqual(kinds, { call: [callsUsd, 6], voice_session: [0.25, 1] });
    assert.equal(Math.round(usage.total_usd * 1e6), Math.round((callsUsd + 0.25) * 1e6));
  });

  it('the ledger pages newest first: every entry once, the cursor continuing after the last one shown', async () => {
    const user = await signUp(t);
    const start = Date.now();
    for (let i = 1; i <= 5; i++) await debit(user, i / 10, new Date(start + i));
    const whole = (await t.request({ method: 'GET', url: '/v1/wallet/transactions?limit=100', ...as(user) })).json();
    assert.deepEqual(
      whole.data.map((e: { amount_usd: number }) => e.amount_usd),
      [-0.5, -0.4, -0.3, -0.2, -0.1, 10],
    );
    assert.deepEqual([whole.has_more, whole.next_cursor], [false, null]);
    const pages = await idsByPage(t, as(user), '/v1/wallet/transactions', 2);
    assert.deepEqual(pages, [whole.data.slice(0, 2), whole.data.slice(2, 4), whole.data.slice(4, 6)].map((p) => p.map((e: { id: string }) => e.id)));
    const exact = (await t.request({ method: 'GET', url: '/v1/wallet/transactions?limit=6', ...as(user) })).json();
    assert.deepEqual([exact.data.length, exact.has_more], [6, false], 'a page holding the last entry has no more');
    const calls = (await t.request({ method: 'GET', url: '/v1/wallet/transactions?type=adjustment', ...as(user) })).json();
    assert.deepEqual(calls.data.map((e: { type: string; amount_usd: number }) => [e.type, e.amount_usd]), [['adjustment', 10]]);
  });

  it('a workspace whose wallet is gone answers 404 naming the wallet, not a 500', async () => {
    const user = await signUp(t);
    await t.platform.db.deleteFrom('wallet_transactions').where('workspace_id', '=', user.workspaceId).execute();
    await t.platform.db.deleteFrom('wallets').where('workspace_id', '=', user.workspaceId).execute();
    const res = await t.request({ method: 'GET', url: '/v1/wallet', ...as(user) });
    assert.equal(res.statusCode, 404, res.body);
    assert.match(res.json().detail, /wallet/i);
  });

  it('pricing is public and follows the configuration', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/pricing' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { currency: 'USD', rates: { call_per_min_usd: 0.09, web_voice_per_min_usd: 0.05, phone_number_monthly_usd: 1.15 } });
  });
});

securitySuite('wallet', async () => t, {
  'GET /v1/wallet': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/wallet' }) },
  'PATCH /v1/wallet': { scope: 'admin', prepare: async () => ({ method: 'PATCH', url: '/v1/wallet', payload: { threshold_usd: 6 } }) },
  'GET /v1/wallet/transactions': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/wallet/transactions' }) },
  'GET /v1/usage': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/usage' }) },
});
