import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { idsByPage } from '../../../test/support/paging.ts';
import { createLogger } from '../../platform/logging.ts';
import { as } from '../calls/test-helpers.ts';
import { createWalletRepo } from '../wallet/repo.ts';
import { createRechargeWorker } from './worker.ts';

// The sandbox's payment history (paging, ledger descriptions) and the auto-recharge worker
// running on its own once started (payments.test.ts drives it one pass at a time).

const t = await buildTestApp();

const topUp = (user: TestUser, amountUsd: number) => t.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), payload: { amount_usd: amountUsd } });
const debit = (user: TestUser, usd: number) =>
  t.platform.db.transaction().execute((tx) => createWalletRepo().applyEntry(tx, { workspaceId: user.workspaceId, type: 'call', amountMicros: -usd * 1e6, description: 'calls', now: new Date() }));
const balanceOf = async (user: TestUser) => (await t.request({ method: 'GET', url: '/v1/wallet', ...as(user) })).json().balance_usd as number;

/** Waits (bounded) until `done` holds. */
async function until(done: () => Promise<boolean> | boolean, what: string) {
  const deadline = Date.now() + 15_000;
  while (!(await done())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('payment history', () => {
  it('pages newest first: every payment once, the cursor continuing after the last one shown', async () => {
    const user = await signUp(t);
    for (let usd = 5; usd <= 9; usd++) assert.equal((await topUp(user, usd)).statusCode, 201);
    const whole = (await t.request({ method: 'GET', url: '/v1/payments/history?limit=100', ...as(user) })).json();
    assert.deepEqual(
      whole.data.map((p: { amount_usd: number }) => p.amount_usd),
      [9, 8, 7, 6, 5],
    );
    assert.deepEqual([whole.has_more, whole.next_cursor], [false, null]);
    const pages = await idsByPage(t, as(user), '/v1/payments/history', 2);
    const ids = whole.data.map((p: { id: string }) => p.id);
    assert.deepEqual(pages, [ids.slice(0, 2), ids.slice(2, 4), ids.slice(4, 5)]);
    const exact = (await t.request({ method: 'GET', url: '/v1/payments/history?limit=5', ...as(user) })).json();
    assert.deepEqual([exact.data.length, exact.has_more], [5, false], 'a page holding the last payment has no more');
  });

  it('the ledger says which credit was a top-up and which an auto-recharge', async () => {
    const user = await signUp(t);
    assert.equal((await topUp(user, 5)).statusCode, 201);
    const set = await t.request({ method: 'PATCH', url: '/v1/wallet', ...as(user), payload: { threshold_usd: 20, auto_recharge: { enabled: true, amount_usd: 20, payment_method: 'pm_card_visa' } } });
    assert.equal(set.statusCode, 200, set.body);
    await debit(user, 1); // 15 → 14: below 20
    assert.equal(await t.modules.payments.worker.runDueOnce(), 1);
    const ledger = (await t.request({ method: 'GET', url: '/v1/wallet/transactions?type=topup', ...as(user) })).json().data;
    assert.deepEqual(
      ledger.map((e: { amount_usd: number; description: string }) => [e.amount_usd, e.description]),
      [
        [20, 'auto-recharge'],
        [5, 'top-up'],
      ],
    );
  });
});

describe('the auto-recharge worker', () => {
  it('once started, recharges a wallet below its threshold by itself; logs each pass that charged, and a pass that failed under its name', async () => {
    const lines: { msg: string; charged?: number; job?: string }[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const passes: number[] = [];
    const payments = {
      ...t.modules.payments.service,
      // Observed, not changed: how many wallets each pass charged.
      async rechargeDue() {
        const charged = await t.modules.payments.service.rechargeDue();
        passes.push(charged);
        return charged;
      },
    };
    const worker = createRechargeWorker({ database: t.platform.database, clock: t.platform.clock, logger: createLogger({ level: 'info', destination }), payments, intervalMs: 10 });

    // A wallet whose settings the API would refuse (an amount that is no number): its pass fails.
    const broken = await signUp(t);
    await t.platform.db.updateTable('wallets').set({ auto_recharge: JSON.stringify({ enabled: true, amount_usd: 'twenty', payment_method: 'pm_card_visa' }) }).where('workspace_id', '=', broken.workspaceId).execute();
    await debit(broken, 6); // 10 → 4: below the default threshold of 5
    const user = await signUp(t);
    const set = await t.request({ method: 'PATCH', url: '/v1/wallet', ...as(user), payload: { auto_recharge: { enabled: true, amount_usd: 20, payment_method: 'pm_card_visa' } } });
    assert.equal(set.statusCode, 200, set.body);

    worker.start();
    try {
      await until(() => lines.some((l) => l.msg === 'auto-recharge: run failed'), 'the failed pass');
      await debit(user, 6); // 10 → 4
      await until(async () => (await balanceOf(user)) === 24, 'the recharge');
      const after = passes.length;
      await until(() => passes.length >= after + 2, 'two more passes');
    } finally {
      await worker.stop();
    }
    const failed = lines.filter((l) => l.msg === 'auto-recharge: run failed');
    assert.deepEqual(
      failed.map((l) => l.job),
      ['auto-recharge'],
    );
    assert.ok(passes.includes(0), 'passes that charged nothing');
    const charged = lines.filter((l) => l.msg === 'auto-recharge: wallets charged');
    assert.deepEqual(
      charged.map((l) => l.charged),
      passes.filter((n) => n > 0),
    );
    assert.deepEqual(
      charged.map((l) => l.charged),
      [1],
    );
    const brokenWallet = await t.platform.db.selectFrom('wallets').select('balance_micros').where('workspace_id', '=', broken.workspaceId).executeTakeFirstOrThrow();
    assert.equal(Number(brokenWallet.balance_micros), 4_000_000, 'the broken wallet charged nothing');
  });
});
