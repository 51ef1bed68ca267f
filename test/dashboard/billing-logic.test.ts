import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EVENT_TYPE_NAMES, EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES, TENANT_DEFAULT_EVENTS } from '../../src/platform/outbox/catalog.ts';
import {
  busiestDay,
  currentCursor,
  firstPage,
  newerPage,
  niceCeiling,
  olderPage,
  parseUsd,
  settingsDraftOf,
  settingsUpdateOf,
  topUpAmountError,
  usageChart,
} from '../../web/dashboard/src/pages/billing-logic.ts';
import { attemptOutcome, durationText } from '../../web/dashboard/src/pages/webhook-attempt.ts';
import { subscribable } from '../../web/dashboard/src/pages/webhook-events.ts';

// The billing and webhooks pages' logic that runs without a browser: amounts as typed, the wallet
// settings form ↔ PATCH /v1/wallet, the usage chart's scale and bars, the ledger's pages, and how
// a delivery attempt reads.

describe('amounts as typed', () => {
  it('reads dollars with up to two decimals, a $ and thousands commas; refuses anything else', () => {
    assert.equal(parseUsd('25'), 25);
    assert.equal(parseUsd(' $1,000.50 '), 1000.5);
    assert.equal(parseUsd('0'), 0);
    for (const text of ['', 'abc', '-5', '5.123', '1e3', '5.', '.5']) assert.equal(parseUsd(text), undefined, text);
  });

  it('a top-up is 5 to 10,000 dollars, as the API takes it', () => {
    assert.equal(topUpAmountError('5'), undefined);
    assert.equal(topUpAmountError('10000'), undefined);
    assert.match(String(topUpAmountError('4.99')), /from \$5 to \$10,000/);
    assert.match(String(topUpAmountError('10000.01')), /from \$5 to \$10,000/);
    assert.match(String(topUpAmountError('twenty')), /Enter an amount/);
  });
});

describe('wallet settings', () => {
  const wallet = { threshold_usd: 5, auto_recharge: { enabled: false, amount_usd: 20, payment_method: null } };

  it('round-trips the wallet through the form', () => {
    const draft = settingsDraftOf(wallet);
    assert.deepEqual(draft, { threshold: '5', autoRecharge: false, rechargeAmount: '20', paymentMethod: '' });
    assert.deepEqual(settingsUpdateOf(draft), { body: { threshold_usd: 5, auto_recharge: { enabled: false, amount_usd: 20, payment_method: null } } });
    const enabled = settingsUpdateOf({ threshold: '12.5', autoRecharge: true, rechargeAmount: '50', paymentMethod: ' pm_card_visa ' });
    assert.deepEqual(enabled, { body: { threshold_usd: 12.5, auto_recharge: { enabled: true, amount_usd: 50, payment_method: 'pm_card_visa' } } });
  });

  it('names each bad field by the API path, so the platform refusals land on the same fields', () => {
    const refused = settingsUpdateOf({ threshold: '-1', autoRecharge: true, rechargeAmount: '2', paymentMethod: '' });
    assert.ok('errors' in refused);
    assert.deepEqual(Object.keys(refused.errors).sort(), ['auto_recharge.amount_usd', 'auto_recharge.payment_method', 'threshold_usd']);
    const badMethod = settingsUpdateOf({ threshold: '5', autoRecharge: false, rechargeAmount: '20', paymentMethod: 'card 4242' });
    assert.ok('errors' in badMethod);
    assert.match(String(badMethod.errors['auto_recharge.payment_method']), /pm_/);
    const tooHigh = settingsUpdateOf({ threshold: '10001', autoRecharge: false, rechargeAmount: '20', paymentMethod: '' });
    assert.ok('errors' in tooHigh && tooHigh.errors.threshold_usd);
  });
});

describe('the usage chart', () => {
  it('rounds the scale up to 1, 2, 2.5 or 5 × 10ⁿ', () => {
    assert.equal(niceCeiling(0), 0.01);
    assert.equal(niceCeiling(0.37), 0.5);
    assert.equal(niceCeiling(1), 1);
    assert.equal(niceCeiling(1.2), 2);
    assert.equal(niceCeiling(2.1), 2.5);
    assert.equal(niceCeiling(7.3), 10);
    assert.equal(niceCeiling(180), 200);
  });

  it('draws a bar per day, scaled to the highest, from the bottom edge; an idle day has none, a tiny day a sliver', () => {
    const days = [
      { date: '2026-11-01', amount_usd: 0 },
      { date: '2026-11-02', amount_usd: 1 },
      { date: '2026-11-03', amount_usd: 2 },
      { date: '2026-11-04', amount_usd: 0.0001 },
    ];
    const chart = usageChart(days, 400, 100);
    assert.equal(chart.maxUsd, 2);
    assert.equal(chart.bars.length, 4);
    const [idle, one, two, tiny] = chart.bars;
    assert.equal(idle.height, 0);
    assert.equal(one.height, 50);
    assert.equal(two.height, 100);
    assert.equal(two.y, 0);
    assert.equal(one.y, 50);
    assert.equal(tiny.height, 1, 'a sliver, not nothing');
    // Side by side, inside the width, none overlapping.
    for (const [i, bar] of chart.bars.entries()) {
      assert.ok(bar.x >= i * 100 && bar.x + bar.width <= (i + 1) * 100, `bar ${i} in its slot`);
    }
    assert.deepEqual(
      chart.ticks.map((t) => [t.amountUsd, t.y]),
      [
        [0, 100],
        [1, 50],
        [2, 0],
      ],
    );
  });

  it('handles no days at all, and names the busiest day', () => {
    assert.deepEqual(usageChart([], 400, 100).bars, []);
    assert.equal(busiestDay([{ date: '2026-11-01', amount_usd: 0 }]), undefined);
    assert.deepEqual(
      busiestDay([
        { date: '2026-11-01', amount_usd: 0.5 },
        { date: '2026-11-02', amount_usd: 3 },
        { date: '2026-11-03', amount_usd: 3 },
      ]),
      { date: '2026-11-02', amount_usd: 3 },
    );
  });
});

describe('the ledger pages', () => {
  it('goes older by the API cursor and back newer to the first page, never before it', () => {
    let trail = firstPage();
    assert.equal(currentCursor(trail), undefined);
    trail = olderPage(trail, 'txn_b');
    trail = olderPage(trail, 'txn_a');
    assert.equal(currentCursor(trail), 'txn_a');
    trail = newerPage(trail);
    assert.equal(currentCursor(trail), 'txn_b');
    trail = newerPage(newerPage(trail));
    assert.deepEqual(trail, [undefined]);
  });
});

describe('a webhook attempt', () => {
  it('reads a 2xx as succeeded, another status as refused, none as no answer', () => {
    assert.equal(attemptOutcome({ status_code: 204, error: null }), 'succeeded');
    assert.equal(attemptOutcome({ status_code: 500, error: null }), 'refused');
    assert.equal(attemptOutcome({ status_code: 410, error: null }), 'refused');
    assert.equal(attemptOutcome({ status_code: null, error: 'timed out after 10000 ms' }), 'no answer');
    assert.equal(durationText(85.4), '85 ms');
    assert.equal(durationText(12_400), '12.4 s');
  });
});

describe("the workspace endpoint's events", () => {
  it("offers what PUT /v1/webhooks accepts, the platform's defaults checked", () => {
    const types = EVENT_TYPE_NAMES.map((type) => ({ type, tenant_default: EVENT_TYPES[type].tenantDefault }));
    const { all, defaults } = subscribable(types);
    assert.deepEqual(all, SUBSCRIBABLE_EVENT_TYPES);
    assert.deepEqual(defaults, TENANT_DEFAULT_EVENTS);
    assert.ok(!all.includes('webhook.test' as never), 'webhook.test is always sent, never chosen');
  });
});
