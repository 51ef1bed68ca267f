import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import { decodeStripeForm } from './form.ts';
import { type FakeStripe, startFakeStripe } from './index.ts';

// The fake Stripe's protocol, checked over raw HTTP (what Stripe documents) and through the SDK.

const SECRET_KEY = 'sk_test_fake_protocol_0123456789';

describe('fake Stripe server (Stripe v1 REST protocol)', () => {
  let fake: FakeStripe;
  let stripe: Stripe;

  const post = (path: string, form: string, headers: Record<string, string> = {}) =>
    fetch(`${fake.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET_KEY}`, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: form,
    });

  before(async () => {
    fake = await startFakeStripe({ secretKey: SECRET_KEY, webhookSecret: 'whsec_fake_protocol' });
    stripe = new Stripe(SECRET_KEY, { host: '127.0.0.1', port: new URL(fake.baseUrl).port, protocol: 'http', maxNetworkRetries: 0 });
  });
  after(() => fake.close());

  it('decodes bracketed form keys into nested hashes and indexed arrays, rejecting prototype keys', () => {
    assert.deepEqual(decodeStripeForm('amount=500&metadata[payment_id]=pay_1&payment_method_types[0]=card&payment_method_types[1]=link&tags[]=a&tags[]=b'), {
      amount: '500',
      metadata: { payment_id: 'pay_1' },
      payment_method_types: ['card', 'link'],
      tags: ['a', 'b'],
    });
    assert.deepEqual(decodeStripeForm('metadata%5Bnote%5D=a+b%26c'), { metadata: { note: 'a b&c' } });
    assert.throws(() => decodeStripeForm('metadata[__proto__][x]=1'));
    assert.throws(() => decodeStripeForm('metadata=1&metadata[x]=1'));
  });

  it("answers 401 in Stripe's error shape without a key or with a wrong one, and accepts Basic auth", async () => {
    const missing = await fetch(`${fake.baseUrl}/v1/customers`, { method: 'POST' });
    assert.equal(missing.status, 401);
    const missingBody = (await missing.json()) as { error: { type: string; message: string } };
    assert.equal(missingBody.error.type, 'invalid_request_error');
    assert.match(missingBody.error.message, /You did not provide an API key/);

    const wrong = await post('/v1/customers', '', { authorization: 'Bearer sk_test_wrong_key_1234' });
    assert.equal(wrong.status, 401);
    assert.match(((await wrong.json()) as { error: { message: string } }).error.message, /^Invalid API Key provided: sk_test_\**1234$/);

    const basic = await post('/v1/customers', 'email=a%40example.com', { authorization: `Basic ${Buffer.from(`${SECRET_KEY}:`).toString('base64')}` });
    assert.equal(basic.status, 200);
    assert.match(((await basic.json()) as { id: string }).id, /^cus_[A-Za-z0-9]{24}$/);
  });

  it('replays a saved result for the same Idempotency-Key and refuses the key with other parameters', async () => {
    const form = 'amount=700&currency=usd&payment_method=pm_card_visa&confirm=true&automatic_payment_methods[enabled]=true&automatic_payment_methods[allow_redirects]=never';
    const first = await post('/v1/payment_intents', form, { 'idempotency-key': 'key-replay' });
    const replay = await post('/v1/payment_intents', form, { 'idempotency-key': 'key-replay' });
    assert.equal(first.headers.get('idempotent-replayed'), null);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.headers.get('idempotency-key'), 'key-replay');
    assert.deepEqual(await replay.json(), await first.json());

    const other = await post('/v1/payment_intents', form.replace('amount=700', 'amount=701'), { 'idempotency-key': 'key-replay' });
    assert.equal(other.status, 400);
    assert.equal(((await other.json()) as { error: { type: string } }).error.type, 'idempotency_error');
    const elsewhere = await post('/v1/customers', form, { 'idempotency-key': 'key-replay' });
    assert.equal(elsewhere.status, 400);
  });

  it('does not save a request rejected by validation, so a corrected retry with the key runs', async () => {
    const invalid = await post('/v1/payment_intents', 'amount=10&currency=usd', { 'idempotency-key': 'key-corrected' });
    assert.equal(invalid.status, 400);
    const invalidBody = (await invalid.json()) as { error: { type: string; code: string; param: string } };
    assert.deepEqual([invalidBody.error.type, invalidBody.error.code, invalidBody.error.param], ['invalid_request_error', 'amount_too_small', 'amount']);
    const corrected = await post('/v1/payment_intents', 'amount=100&currency=usd', { 'idempotency-key': 'key-corrected' });
    assert.equal(corrected.status, 200);
    assert.equal(((await corrected.json()) as { status: string }).status, 'requires_payment_method');
  });

  it('requires a return_url to confirm while redirect-based automatic payment methods are allowed', async () => {
    await assert.rejects(
      stripe.paymentIntents.create({ amount: 500, currency: 'usd', payment_method: 'pm_card_visa', confirm: true }),
      (error: unknown) => error instanceof Stripe.errors.StripeInvalidRequestError && /return_url/.test(error.message),
    );
    const intent = await stripe.paymentIntents.create({
      amount: 500,
      currency: 'usd',
      payment_method: 'pm_card_authenticationRequired',
      confirm: true,
      return_url: 'https://app.example/return',
    });
    assert.equal(intent.status, 'requires_action');
    assert.equal(intent.next_action?.type, 'redirect_to_url');
    assert.match(intent.next_action?.redirect_to_url?.url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/authenticate\/pi_/);
  });

  it('raises a declined confirmation as StripeCardError carrying the PaymentIntent, and records the events', async () => {
    const error = await stripe.paymentIntents
      .create(
        { amount: 800, currency: 'usd', payment_method: 'pm_card_chargeDeclinedInsufficientFunds', confirm: true, metadata: { payment_id: 'pay_decline' }, automatic_payment_methods: { enabled: true, allow_redirects: 'never' } },
        { idempotencyKey: 'key-decline' },
      )
      .then(
        () => assert.fail('a decline must be thrown'),
        (thrown: unknown) => thrown,
      );
    assert.ok(error instanceof Stripe.errors.StripeCardError);
    assert.equal(error.statusCode, 402);
    assert.equal(error.code, 'card_declined');
    assert.equal(error.decline_code, 'insufficient_funds');
    const intentId = error.payment_intent?.id ?? '';
    assert.equal(error.payment_intent?.last_payment_error?.decline_code, 'insufficient_funds');

    const retrieved = await stripe.paymentIntents.retrieve(intentId);
    assert.equal(retrieved.status, 'requires_payment_method');
    assert.deepEqual(retrieved.metadata, { payment_id: 'pay_decline' });
    const events = fake.events().filter((e) => e.data.object.id === intentId);
    assert.deepEqual(events.map((e) => e.type), ['payment_intent.created', 'payment_intent.payment_failed']);
    assert.ok(events.every((e) => /^evt_/.test(e.id) && e.livemode === false && e.request.idempotency_key === 'key-decline' && e.api_version !== ''));
    assert.equal(events[0].data.object.status, 'requires_confirmation');
  });

  it('answers resource_missing for unknown objects and payment methods', async () => {
    await assert.rejects(stripe.paymentIntents.retrieve('pi_missing'), (error: unknown) => error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing');
    await assert.rejects(
      stripe.paymentIntents.create({ amount: 500, currency: 'usd', payment_method: 'pm_unknown' }),
      (error: unknown) => error instanceof Stripe.errors.StripeInvalidRequestError && error.param === 'payment_method',
    );
    const unknownRoute = await post('/v1/refunds', 'payment_intent=pi_x');
    assert.equal(unknownRoute.status, 404);
  });
});
