import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startFakeStripe } from '../../../test/fakes/stripe/index.ts';
import type { FakeStripeEvent } from '../../../test/fakes/stripe/objects.ts';
import { stripeSignatureHeader } from '../../../test/fakes/stripe/webhooks.ts';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { as } from '../calls/test-helpers.ts';

// How Stripe's signed events settle a pending payment (payments.test.ts has the happy paths): a
// card failing 3-D Secure, events found by their PaymentIntent or naming no payment of ours, the
// webhook's answers, and a Stripe that refuses the platform's requests.

const STRIPE_SECRET = 'sk_test_settlement_0123456789';
const WEBHOOK_SECRET = 'whsec_settlement_test_0123456789';
const PUBLISHABLE_KEY = 'pk_test_settlement_0123456789';
const stripe = await startFakeStripe({ secretKey: STRIPE_SECRET, webhookSecret: WEBHOOK_SECRET, publishableKey: PUBLISHABLE_KEY });
after(() => stripe.close());
const stripeEnv = { PAYMENTS_PROVIDER: 'stripe', STRIPE_SECRET_KEY: STRIPE_SECRET, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE_URL: stripe.baseUrl };
const t = await buildTestApp({ env: stripeEnv });
await t.app.listen({ port: 0, host: '127.0.0.1' });
const address = t.app.server.address();
const webhookUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/payments/webhook`;

const balanceOf = async (user: TestUser) => (await t.request({ method: 'GET', url: '/v1/wallet', ...as(user) })).json().balance_usd as number;
const paymentOf = async (user: TestUser, id: string) => (await t.request({ method: 'GET', url: `/v1/payments/${id}`, ...as(user) })).json();
const intentOf = (paymentId: string) => stripe.paymentIntents().find((pi) => pi.metadata.payment_id === paymentId);
const eventOf = (type: string, intentId: string | undefined) => stripe.events().find((e) => e.type === type && e.data.object.id === intentId);
/** Delivers a signed event; answers the webhook's status and JSON body. */
async function deliver(event: FakeStripeEvent) {
  const [delivered] = await stripe.deliver(webhookUrl, event);
  return { status: delivered.status, body: JSON.parse(delivered.body) };
}

async function topUp(app: TestApp, user: TestUser, payload: Record<string, unknown>) {
  return app.request({ method: 'POST', url: '/v1/payments/topup', ...as(user), payload });
}

/** A top-up with a card asking for 3-D Secure: pending until the customer passes or fails it. */
async function pendingAuthentication(user: TestUser) {
  const res = await topUp(t, user, { amount_usd: 30, payment_method: 'pm_card_authenticationRequired' });
  assert.equal(res.statusCode, 201, res.body);
  const payment = res.json();
  assert.deepEqual([payment.status, payment.trigger, payment.payment_method], ['pending', 'manual', 'pm_card_authenticationRequired']);
  const intent = intentOf(payment.id);
  assert.ok(intent);
  return { payment, intent };
}

describe('Stripe events settling a payment', () => {
  it('a card failing 3-D Secure settles the payment failed with its reason; nothing credited; the webhook answers {received, result}', async () => {
    const user = await signUp(t);
    const { payment, intent } = await pendingAuthentication(user);
    const failed = stripe.completeCustomerAction(intent.id, 'failed');
    assert.equal(failed.type, 'payment_intent.payment_failed');
    assert.deepEqual(await deliver(failed), { status: 200, body: { received: true, result: 'applied' } });
    const settled = await paymentOf(user, payment.id);
    assert.deepEqual([settled.status, settled.failure_reason], ['failed', failed.data.object.last_payment_error?.message]);
    assert.ok(settled.failure_reason && settled.settled_at);
    assert.equal(await balanceOf(user), 10);
  });

  it('a failure event carrying no reason settles the payment failed with a reason of its own', async () => {
    const user = await signUp(t);
    const { payment, intent } = await pendingAuthentication(user);
    const result = await t.modules.payments.service.applySettlement({ eventId: `evt_${payment.id}`, outcome: 'failed', providerRef: intent.id, paymentId: payment.id, amountCents: 3000 });
    assert.equal(result, 'applied');
    assert.deepEqual([(await paymentOf(user, payment.id)).status, (await paymentOf(user, payment.id)).failure_reason], ['failed', 'the payment failed']);
  });

  it('a failure reason longer than 500 characters is kept cut to its first 500', async () => {
    const user = await signUp(t);
    const { payment, intent } = await pendingAuthentication(user);
    const failed = structuredClone(stripe.completeCustomerAction(intent.id, 'failed'));
    const error = failed.data.object.last_payment_error;
    assert.ok(error);
    error.message = `${'a'.repeat(500)}${'b'.repeat(100)}`;
    assert.equal((await deliver(failed)).body.result, 'applied');
    assert.equal((await paymentOf(user, payment.id)).failure_reason, 'a'.repeat(500));
  });

  it('an event without our payment id is matched by its PaymentIntent, recorded from the charge', async () => {
    const user = await signUp(t);
    const res = await topUp(t, user, { amount_usd: 30, payment_method: 'pm_card_visa' });
    assert.equal(res.statusCode, 201, res.body);
    const intent = intentOf(res.json().id);
    const stored = await t.platform.db.selectFrom('payments').select('provider_ref').where('id', '=', res.json().id).executeTakeFirstOrThrow();
    assert.equal(stored.provider_ref, intent?.id);
    const succeeded = structuredClone(eventOf('payment_intent.succeeded', intent?.id));
    assert.ok(succeeded);
    succeeded.data.object.metadata = {};
    assert.equal((await deliver(succeeded)).body.result, 'applied');
    assert.equal((await paymentOf(user, res.json().id)).status, 'succeeded');
    assert.equal(await balanceOf(user), 40);
  });

  it('an event naming a payment we do not know answers unknown_payment and credits nothing', async () => {
    const user = await signUp(t);
    const res = await topUp(t, user, { amount_usd: 30, payment_method: 'pm_card_visa' });
    const succeeded = structuredClone(eventOf('payment_intent.succeeded', intentOf(res.json().id)?.id));
    assert.ok(succeeded);
    succeeded.id = `${succeeded.id}_elsewhere`;
    succeeded.data.object.metadata = { payment_id: 'pay_00000000000000000000000000' };
    assert.deepEqual(await deliver(succeeded), { status: 200, body: { received: true, result: 'unknown_payment' } });
    assert.equal(await balanceOf(user), 10);
  });

  it('a late payment_failed for a top-up confirmed in the browser and already paid is recorded and changes nothing', async () => {
    const user = await signUp(t);
    const res = await topUp(t, user, { amount_usd: 25 });
    const payment = res.json();
    const intent = intentOf(payment.id);
    assert.ok(intent);
    const confirmed = await fetch(`${stripe.baseUrl}/v1/payment_intents/${intent.id}/confirm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PUBLISHABLE_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_secret: payment.client_secret, payment_method: 'pm_card_visa' }),
    });
    assert.equal(confirmed.status, 200);
    const succeeded = eventOf('payment_intent.succeeded', intent.id);
    assert.ok(succeeded);
    assert.equal((await deliver(succeeded)).body.result, 'applied');
    const lateFailure = { ...structuredClone(succeeded), id: `${succeeded.id}_late_failure`, type: 'payment_intent.payment_failed' };
    assert.equal((await deliver(lateFailure)).body.result, 'applied', 'not ignored as a decline awaiting another card: the payment is no longer pending');
    assert.deepEqual([(await paymentOf(user, payment.id)).status, await balanceOf(user)], ['succeeded', 35]);
  });

  it('a forged signature is 400 saying so; a signed body that is no JSON is a 500, not a signature error', async () => {
    const user = await signUp(t);
    const res = await topUp(t, user, { amount_usd: 30, payment_method: 'pm_card_visa' });
    const succeeded = eventOf('payment_intent.succeeded', intentOf(res.json().id)?.id);
    assert.ok(succeeded);
    const [forged] = await stripe.deliver(webhookUrl, succeeded, { tamper: true });
    assert.equal(forged.status, 400);
    assert.deepEqual([JSON.parse(forged.body).code, JSON.parse(forged.body).detail], ['invalid_webhook_signature', 'Stripe-Signature does not match this request']);
    const payload = 'not json';
    const garbled = await t.app.inject({
      method: 'POST',
      url: '/v1/payments/webhook',
      headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignatureHeader(payload, WEBHOOK_SECRET) },
      payload,
    });
    assert.equal(garbled.statusCode, 500, garbled.body);
    assert.equal(garbled.json().code, 'internal');
    assert.equal(await balanceOf(user), 10);
  });

  it('GET of an unknown payment is 404 naming the payment', async () => {
    const user = await signUp(t);
    const res = await t.request({ method: 'GET', url: '/v1/payments/pay_00000000000000000000000000', ...as(user) });
    assert.equal(res.statusCode, 404);
    assert.deepEqual([res.json().code, res.json().detail], ['not_found', 'payment not found']);
  });
});

describe('a Stripe that refuses the platform', () => {
  it('the top-up is 402 with the provider failure and the payment id; the payment is failed, nothing credited', async () => {
    const refused = await buildTestApp({ env: { ...stripeEnv, STRIPE_SECRET_KEY: 'sk_test_revoked_0123456789' } });
    const user = await signUp(refused);
    const res = await topUp(refused, user, { amount_usd: 30, payment_method: 'pm_card_visa' });
    assert.equal(res.statusCode, 402, res.body);
    const [payment] = (await refused.request({ method: 'GET', url: '/v1/payments/history', ...as(user) })).json().data;
    assert.equal(payment.status, 'failed');
    assert.match(payment.failure_reason, /^the payment provider failed: .*API key/i);
    assert.deepEqual([res.json().code, res.json().detail], ['payment_failed', `${payment.failure_reason} (payment ${payment.id}, kept in the history)`]);
    assert.equal((await refused.request({ method: 'GET', url: '/v1/wallet', ...as(user) })).json().balance_usd, 10);
  });
});
