import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startFakeStripe } from '../../../test/fakes/stripe/index.ts';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { as } from '../calls/test-helpers.ts';
import { createWalletRepo } from '../wallet/repo.ts';

// Top-ups on the sandbox provider (settled at once) and on Stripe through a local fake written
// from Stripe's docs (pending until its signed webhook; every event credits at most once whatever
// the order or the repeats), idempotent racing top-ups, declines, and auto-recharge.

const t = await buildTestApp();

const STRIPE_SECRET = 'sk_test_platform_0123456789';
const WEBHOOK_SECRET = 'whsec_platform_test_0123456789';
const PUBLISHABLE_KEY = 'pk_test_platform_0123456789';
const stripe = await startFakeStripe({ secretKey: STRIPE_SECRET, webhookSecret: WEBHOOK_SECRET, publishableKey: PUBLISHABLE_KEY });
after(() => stripe.close());
const onStripe = await buildTestApp({ env: { PAYMENTS_PROVIDER: 'stripe', STRIPE_SECRET_KEY: STRIPE_SECRET, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE_URL: stripe.baseUrl } });
await onStripe.app.listen({ port: 0, host: '127.0.0.1' });
const address = onStripe.app.server.address();
const webhookUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/payments/webhook`;

async function balanceOf(app: TestApp, user: TestUser) {
  return (await app.request({ method: 'GET', url: '/v1/wallet', ...as(user) })).json().balance_usd as number;
}
async function eventsOf(app: TestApp, user: TestUser, type: string) {
  return app.platform.db.selectFrom('webhook_events').select(['payload']).where('workspace_id', '=', user.workspaceId).where('type', '=', type).execute();
}
async function withTenantWebhook(app: TestApp) {
  const user = await signUp(app);
  const put = await app.request({ method: 'PUT', url: '/v1/webhooks', ...as(user), payload: { webhook_url: 'https://hooks.example.test/payments' } });
  assert.equal(put.statusCode, 200, put.body);
  return user;
}

describe('payments on the sandbox', () => {
  it('pm_card_visa tops up at once: a topup ledger row, payment.succeeded, history and get', async () => {
    const user = await withTenantWebhook(t);
    const res = await t.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), payload: { amount_usd: 25 } });
    assert.equal(res.statusCode, 201, res.body);
    const payment = res.json();
    assert.deepEqual([payment.status, payment.amount_usd, payment.provider, payment.trigger], ['succeeded', 25, 'sandbox', 'manual']);
    assert.ok(payment.id.startsWith('pay_') && payment.settled_at);
    assert.equal(await balanceOf(t, user), 35);
    const ledger = (await t.request({ method: 'GET', url: '/v1/wallet/transactions?type=topup', ...as(user) })).json().data;
    assert.deepEqual(ledger.map((r: { amount_usd: number; reference_id: string; balance_after_usd: number }) => [r.amount_usd, r.reference_id, r.balance_after_usd]), [[25, payment.id, 35]]);
    const events = await eventsOf(t, user, 'payment.succeeded');
    assert.equal(events.length, 1);
    assert.deepEqual(JSON.parse(events[0].payload).data, { payment_id: payment.id, amount_usd: 25, currency: 'USD', balance_usd: 35 });
    assert.deepEqual((await t.request({ method: 'GET', url: `/v1/payments/${payment.id}`, ...as(user) })).json(), payment);
    assert.deepEqual((await t.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data, [payment]);
  });

  it('pm_card_declined is 402 payment_failed, kept in the history as failed, with no credit', async () => {
    const user = await signUp(t);
    const res = await t.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), payload: { amount_usd: 50, payment_method: 'pm_card_declined' } });
    assert.equal(res.statusCode, 402, res.body);
    assert.equal(res.json().code, 'payment_failed');
    const history = (await t.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data;
    assert.deepEqual(history.map((p: { status: string; failure_reason: string }) => [p.status, p.failure_reason]), [['failed', 'Your card was declined.']]);
    assert.equal(await balanceOf(t, user), 10);
    for (const payload of [{ amount_usd: 4.99 }, { amount_usd: 10_001 }, { amount_usd: 10, payment_method: 'visa' }, {}]) {
      assert.equal((await t.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), payload })).statusCode, 422, JSON.stringify(payload));
    }
  });

  it('two racing top-ups with one Idempotency-Key credit once', async () => {
    const user = await signUp(t);
    const send = () => t.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), headers: { 'idempotency-key': 'topup-race-1' }, payload: { amount_usd: 40 } });
    const answers = await Promise.all([send(), send(), send()]);
    assert.ok(answers.every((a) => a.statusCode === 201 || a.statusCode === 409), answers.map((a) => a.statusCode).join());
    const again = await send();
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(await balanceOf(t, user), 50, 'credited once');
    assert.equal((await t.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data.length, 1);
  });

  it('auto-recharge tops up through the saved method once per crossing below the threshold', async () => {
    const user = await signUp(t);
    const set = await t.request({ method: 'PATCH', url: '/v1/wallet', ...as(user), payload: { threshold_usd: 5, auto_recharge: { enabled: true, amount_usd: 20, payment_method: 'pm_card_visa' } } });
    assert.equal(set.statusCode, 200, set.body);
    const repo = createWalletRepo();
    const debit = (usd: number) =>
      t.platform.db.transaction().execute((tx) => repo.applyEntry(tx, { workspaceId: user.workspaceId, type: 'call', amountMicros: -usd * 1e6, description: 'calls', now: new Date() }));
    await t.modules.payments.worker.runDueOnce();
    assert.equal(await balanceOf(t, user), 10, 'above the threshold: nothing to do');
    await debit(6); // 4: below
    await Promise.all([t.modules.payments.worker.runDueOnce(), t.modules.payments.worker.runDueOnce()]);
    assert.equal(await balanceOf(t, user), 24, 'recharged once, even by two workers at once');
    const recharges = (await t.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data;
    assert.deepEqual(recharges.map((p: { trigger: string; status: string; payment_method: string }) => [p.trigger, p.status, p.payment_method]), [['auto_recharge', 'succeeded', 'pm_card_visa']]);
    await debit(20); // 4 again: a new crossing
    await t.modules.payments.worker.runDueOnce();
    assert.equal(await balanceOf(t, user), 24);

    // A recharge that does not lift the balance over the threshold is not retried until it crosses again.
    await t.request({ method: 'PATCH', url: '/v1/wallet', ...as(user), payload: { auto_recharge: { payment_method: 'pm_card_declined' } } });
    await debit(20); // 4
    await t.modules.payments.worker.runDueOnce();
    await t.modules.payments.worker.runDueOnce();
    const failed = (await t.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data.filter((p: { status: string }) => p.status === 'failed');
    assert.equal(failed.length, 1, 'a declined recharge is tried once per crossing');
  });

  it('auto-recharge at the threshold exactly: not at it, one micro-dollar below it; back at it exactly arms it again', async () => {
    const user = await signUp(t);
    const set = await t.request({ method: 'PATCH', url: '/v1/wallet', ...as(user), payload: { threshold_usd: 5, auto_recharge: { enabled: true, amount_usd: 20, payment_method: 'pm_card_declined' } } });
    assert.equal(set.statusCode, 200, set.body);
    const entry = (micros: number) =>
      t.platform.db.transaction().execute((tx) => createWalletRepo().applyEntry(tx, { workspaceId: user.workspaceId, type: micros < 0 ? 'call' : 'adjustment', amountMicros: micros, description: 'test', now: new Date() }));
    const attempts = async () => (await t.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data.length as number;

    await entry(-5_000_000); // 10 → 5: at the threshold, not below it
    assert.equal(await t.modules.payments.worker.runDueOnce(), 0);
    await entry(-1); // 4.999999: below
    assert.equal(await t.modules.payments.worker.runDueOnce(), 1);
    assert.equal(await attempts(), 1, 'declined: the balance stays below and the latch stays disarmed');
    assert.equal(await t.modules.payments.worker.runDueOnce(), 0);
    await entry(-1); // 4.999998: a debit while below is no new crossing
    assert.equal(await t.modules.payments.worker.runDueOnce(), 0, 'not armed again below the threshold');

    await entry(2); // back at 5 exactly: armed again
    await t.request({ method: 'PATCH', url: '/v1/wallet', ...as(user), payload: { auto_recharge: { payment_method: 'pm_card_visa' } } });
    await entry(-1); // below again: a new crossing
    assert.equal(await t.modules.payments.worker.runDueOnce(), 1);
    assert.equal(await balanceOf(t, user), 24.999999);
  });

  it('a settled payment never changes: later provider events with other ids (failed, succeeded again) are recorded and ignored', async () => {
    const user = await signUp(t);
    const topUp = await t.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), payload: { amount_usd: 20, payment_method: 'pm_card_visa' } });
    assert.equal(topUp.statusCode, 201, topUp.body);
    const paid = topUp.json();
    const declined = await t.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), payload: { amount_usd: 50, payment_method: 'pm_card_declined' } });
    assert.equal(declined.statusCode, 402, declined.body);
    const [failed] = (await t.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data;
    assert.equal(failed.status, 'failed');
    const late = (eventId: string, paymentId: string, outcome: 'succeeded' | 'failed') =>
      t.modules.payments.service.applySettlement({ eventId, paymentId, providerRef: `ref_${paymentId}`, outcome, amountCents: 2000, reason: 'card declined later' });
    assert.equal(await late('evt_late_failed', paid.id, 'failed'), 'applied');
    assert.equal(await late('evt_second_succeeded', paid.id, 'succeeded'), 'applied');
    assert.equal(await late('evt_revived', failed.id, 'succeeded'), 'applied');
    const get = async (id: string) => (await t.request({ method: 'GET', url: `/v1/payments/${id}`, ...as(user) })).json();
    assert.deepEqual([(await get(paid.id)).status, (await get(paid.id)).failure_reason], ['succeeded', null]);
    assert.equal((await get(failed.id)).status, 'failed');
    assert.equal(await balanceOf(t, user), 30, 'the 20 top-up credited once, the declined 50 never');
    const ledger = await t.platform.db.selectFrom('wallet_transactions').select('reference_id').where('workspace_id', '=', user.workspaceId).where('type', '=', 'topup').execute();
    assert.deepEqual(ledger.map((r) => r.reference_id), [paid.id]);
  });

  it('the sandbox has no webhook: anything posted there is ignored', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/payments/webhook', headers: { 'content-type': 'application/json' }, payload: '{"type":"payment_intent.succeeded"}' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { received: true, result: 'ignored' });
  });
});

describe('payments on Stripe', () => {
  it('a top-up is pending until the signed webhook; replayed, duplicated and reordered events credit once', async () => {
    const user = await withTenantWebhook(onStripe);
    const res = await onStripe.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), payload: { amount_usd: 30, payment_method: 'pm_card_visa' } });
    assert.equal(res.statusCode, 201, res.body);
    const payment = res.json();
    assert.deepEqual([payment.status, payment.provider], ['pending', 'stripe']);
    assert.equal(await balanceOf(onStripe, user), 10, 'nothing credited before the webhook');
    const intent = stripe.paymentIntents().find((pi) => pi.metadata.payment_id === payment.id);
    assert.ok(intent, 'the PaymentIntent carries our payment id');
    assert.equal(intent.amount, 3000);
    const events = stripe.events().filter((e) => (e.data.object as { id: string }).id === intent.id);
    const succeeded = events.find((e) => e.type === 'payment_intent.succeeded');
    const created = events.find((e) => e.type === 'payment_intent.created');
    assert.ok(succeeded && created);

    const forged = await stripe.deliver(webhookUrl, succeeded, { tamper: true });
    assert.equal(forged[0].status, 400, forged[0].body);
    assert.equal(JSON.parse(forged[0].body).code, 'invalid_webhook_signature');
    assert.equal(await balanceOf(onStripe, user), 10, 'a forged event credits nothing');

    const first = await stripe.deliver(webhookUrl, succeeded, { duplicate: true });
    assert.deepEqual(first.map((d) => [d.status, JSON.parse(d.body).result]), [[200, 'applied'], [200, 'duplicate']]);
    const late = await stripe.deliver(webhookUrl, created);
    assert.equal(JSON.parse(late[0].body).result, 'ignored');
    await stripe.deliver(webhookUrl, succeeded);
    assert.equal(await balanceOf(onStripe, user), 40, 'credited once');
    const settled = (await onStripe.request({ method: 'GET', url: `/v1/payments/${payment.id}`, ...as(user) })).json();
    assert.equal(settled.status, 'succeeded');
    assert.equal((await eventsOf(onStripe, user, 'payment.succeeded')).length, 1);
  });

  it('a succeeded payment stays succeeded: a second signed event with another id (payment_failed, succeeded) changes nothing', async () => {
    const user = await withTenantWebhook(onStripe);
    const res = await onStripe.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), payload: { amount_usd: 30, payment_method: 'pm_card_visa' } });
    assert.equal(res.statusCode, 201, res.body);
    const payment = res.json();
    const intent = stripe.paymentIntents().find((pi) => pi.metadata.payment_id === payment.id);
    const succeeded = stripe.events().find((e) => e.type === 'payment_intent.succeeded' && (e.data.object as { id: string }).id === intent?.id);
    assert.ok(succeeded);
    assert.equal(JSON.parse((await stripe.deliver(webhookUrl, succeeded))[0].body).result, 'applied');
    assert.equal(await balanceOf(onStripe, user), 40);

    const lateFailure = { ...structuredClone(succeeded), id: `${succeeded.id}_late_failure`, type: 'payment_intent.payment_failed' };
    lateFailure.data.object.status = 'requires_payment_method';
    const secondSuccess = { ...structuredClone(succeeded), id: `${succeeded.id}_second` };
    for (const event of [lateFailure, secondSuccess]) {
      const [delivered] = await stripe.deliver(webhookUrl, event);
      assert.equal(delivered.status, 200, delivered.body);
      assert.equal(JSON.parse(delivered.body).result, 'applied', `${event.type} ${event.id} was verified and recorded`);
    }
    const settled = (await onStripe.request({ method: 'GET', url: `/v1/payments/${payment.id}`, ...as(user) })).json();
    assert.deepEqual([settled.status, settled.failure_reason], ['succeeded', null]);
    assert.equal(await balanceOf(onStripe, user), 40, 'credited once');
    assert.equal((await eventsOf(onStripe, user, 'payment.succeeded')).length, 1);
  });

  it('auto-recharge charges the saved method off session; the webhook credits it', async () => {
    const user = await signUp(onStripe);
    await onStripe.request({ method: 'PATCH', url: '/v1/wallet', ...as(user), payload: { auto_recharge: { enabled: true, amount_usd: 15, payment_method: 'pm_card_visa' } } });
    await onStripe.platform.db.transaction().execute((tx) =>
      createWalletRepo().applyEntry(tx, { workspaceId: user.workspaceId, type: 'call', amountMicros: -7_000_000, description: 'calls', now: new Date() }),
    );
    assert.equal(await onStripe.modules.payments.worker.runDueOnce(), 1);
    const [recharge] = (await onStripe.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data;
    assert.deepEqual([recharge.trigger, recharge.status, recharge.amount_usd], ['auto_recharge', 'pending', 15]);
    const sent = stripe.requests.find((r) => r.method === 'POST' && r.path === '/v1/payment_intents' && (r.params.metadata as { payment_id?: string } | undefined)?.payment_id === recharge.id);
    assert.ok(sent, 'a PaymentIntent was created for it');
    assert.equal(sent.params.off_session, 'true');
    const intent = stripe.paymentIntents().find((pi) => pi.metadata.payment_id === recharge.id);
    const succeeded = stripe.events().find((e) => e.type === 'payment_intent.succeeded' && (e.data.object as { id: string }).id === intent?.id);
    assert.ok(succeeded);
    await stripe.deliver(webhookUrl, succeeded);
    assert.equal(await balanceOf(onStripe, user), 18);
  });

  it('without payment_method: 201 pending with the client secret (not stored, not listed); confirmed in the browser, the webhook credits it', async () => {
    const user = await withTenantWebhook(onStripe);
    const res = await onStripe.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), headers: { 'idempotency-key': 'browser-topup-1' }, payload: { amount_usd: 25 } });
    assert.equal(res.statusCode, 201, res.body);
    const payment = res.json();
    assert.deepEqual([payment.status, payment.provider, payment.payment_method], ['pending', 'stripe', null]);
    const intent = stripe.paymentIntents().find((pi) => pi.metadata.payment_id === payment.id);
    assert.ok(intent);
    assert.equal(payment.client_secret, intent.client_secret);
    assert.equal(intent.status, 'requires_payment_method');
    const replay = await onStripe.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), headers: { 'idempotency-key': 'browser-topup-1' }, payload: { amount_usd: 25 } });
    assert.equal(replay.json().client_secret, intent.client_secret, 'a retried request answers the same secret');
    assert.equal(stripe.paymentIntents().filter((pi) => pi.metadata.payment_id === payment.id).length, 1);
    assert.equal((await onStripe.request({ method: 'GET', url: `/v1/payments/${payment.id}`, ...as(user) })).json().client_secret, null);
    assert.equal((await onStripe.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data[0].client_secret, null);
    const stored = await onStripe.platform.db.selectFrom('payments').selectAll().where('id', '=', payment.id).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(stored).includes(intent.client_secret), 'the client secret is not in the payment row');
    assert.equal(await balanceOf(onStripe, user), 10, 'nothing credited before the customer confirms');

    // Stripe.js in the customer's browser: the publishable key and the client secret.
    const confirmWith = async (paymentMethod: string) => {
      const response = await fetch(`${stripe.baseUrl}/v1/payment_intents/${intent.id}/confirm`, {
        method: 'POST',
        headers: { authorization: `Bearer ${PUBLISHABLE_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_secret: payment.client_secret, payment_method: paymentMethod }),
      });
      return (await response.json()) as { status?: string; error?: { code: string } };
    };
    // A declined card first: Stripe's payment_failed event leaves the payment pending for another card.
    assert.equal((await confirmWith('pm_card_chargeDeclined')).error?.code, 'card_declined');
    const declined = stripe.events().find((e) => e.type === 'payment_intent.payment_failed' && e.data.object.id === intent.id);
    assert.ok(declined);
    assert.equal(JSON.parse((await stripe.deliver(webhookUrl, declined))[0].body).result, 'ignored');
    assert.equal((await onStripe.request({ method: 'GET', url: `/v1/payments/${payment.id}`, ...as(user) })).json().status, 'pending');
    assert.equal((await confirmWith('pm_card_visa')).status, 'succeeded');
    assert.equal(await balanceOf(onStripe, user), 10, 'nor before the webhook');
    const succeeded = stripe.events().find((e) => e.type === 'payment_intent.succeeded' && e.data.object.id === intent.id);
    assert.ok(succeeded);
    assert.equal(JSON.parse((await stripe.deliver(webhookUrl, succeeded))[0].body).result, 'applied');
    assert.equal(await balanceOf(onStripe, user), 35);
    assert.equal((await onStripe.request({ method: 'GET', url: `/v1/payments/${payment.id}`, ...as(user) })).json().status, 'succeeded');
    assert.equal((await eventsOf(onStripe, user, 'payment.succeeded')).length, 1);
  });

  it('auto-recharge without a saved method is refused (nobody is there to confirm): a failed payment, no PaymentIntent', async () => {
    const user = await signUp(onStripe);
    // Set directly: the API refuses to enable auto-recharge without a method.
    await onStripe.platform.db.updateTable('wallets').set({ auto_recharge: JSON.stringify({ enabled: true, amount_usd: 15 }) }).where('workspace_id', '=', user.workspaceId).execute();
    await onStripe.platform.db.transaction().execute((tx) =>
      createWalletRepo().applyEntry(tx, { workspaceId: user.workspaceId, type: 'call', amountMicros: -7_000_000, description: 'calls', now: new Date() }),
    );
    const intentsBefore = stripe.paymentIntents().length;
    assert.ok((await onStripe.modules.payments.worker.runDueOnce()) >= 1);
    const [recharge] = (await onStripe.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data;
    assert.deepEqual([recharge.status, recharge.trigger], ['failed', 'auto_recharge']);
    assert.equal(stripe.paymentIntents().length, intentsBefore);
  });

  it('a declined card is 402 with a failed payment; its later payment_failed event changes nothing', async () => {
    const user = await signUp(onStripe);
    const res = await onStripe.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), payload: { amount_usd: 30, payment_method: 'pm_card_declined' } });
    assert.equal(res.statusCode, 402, res.body);
    const [failed] = (await onStripe.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data;
    assert.equal(failed.status, 'failed');
    const event = stripe.events().find((e) => e.type === 'payment_intent.payment_failed' && (e.data.object as { metadata: { payment_id?: string } }).metadata.payment_id === failed.id);
    assert.ok(event);
    const delivered = await stripe.deliver(webhookUrl, event);
    assert.equal(delivered[0].status, 200);
    assert.equal(await balanceOf(onStripe, user), 10);
  });
});

securitySuite('payments', async () => t, {
  'POST /v1/payments/topup': { scope: 'admin', prepare: async () => ({ method: 'POST', url: '/v1/payments/topup', payload: { amount_usd: 5 } }) },
  'GET /v1/payments/history': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/payments/history' }) },
  'GET /v1/payments/{id}': {
    scope: 'read-only',
    ownedResource: true,
    prepare: async (app, owner) => {
      const res = await app.request({ method: 'POST', url: '/v1/payments/topup', ...as(owner), payload: { amount_usd: 5 } });
      assert.equal(res.statusCode, 201, res.body);
      return { method: 'GET', url: `/v1/payments/${res.json().id}` };
    },
  },
});
