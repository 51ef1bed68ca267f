import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import { type ChargeRequest, InvalidWebhookSignature, type PaymentsProvider, type SettlementEvent } from '../../ports/payments.ts';
import { type FakeStripe, type FakeStripeEvent, startFakeStripe, stripeSignatureHeader } from '../../../test/fakes/stripe/index.ts';
import { createStripePayments } from './stripe.ts';

const SECRET_KEY = 'sk_test_local_fake_0123456789';
const WEBHOOK_SECRET = 'whsec_local_fake_0123456789';
const PUBLISHABLE_KEY = 'pk_test_local_fake_0123456789';

/** What Stripe.js does in the customer's browser: confirm with the publishable key and the client secret. */
async function confirmInBrowser(fake: FakeStripe, clientSecret: string, paymentMethod: string, key = PUBLISHABLE_KEY) {
  const id = clientSecret.split('_secret_')[0];
  const response = await fetch(`${fake.baseUrl}/v1/payment_intents/${id}/confirm`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded', origin: 'http://dashboard.test' },
    body: new URLSearchParams({ client_secret: clientSecret, payment_method: paymentMethod }),
  });
  return { status: response.status, cors: response.headers.get('access-control-allow-origin'), body: (await response.json()) as { status?: string; error?: { code?: string } } };
}

/** A webhook endpoint as the payments module will have one: raw body + header into verifyWebhook. */
interface WebhookReceiver {
  url: string;
  close(): Promise<void>;
}

async function startWebhookReceiver(provider: PaymentsProvider): Promise<WebhookReceiver> {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const header = request.headers['stripe-signature'];
      try {
        const settlement = provider.verifyWebhook(Buffer.concat(chunks), typeof header === 'string' ? header : undefined);
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ settlement }));
      } catch (error) {
        const status = error instanceof InvalidWebhookSignature ? 400 : 500;
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error) }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/stripe`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function chargeRequest(overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  return {
    paymentId: `pay_${randomUUID()}`,
    workspaceId: `ws_${randomUUID()}`,
    amountCents: 1234,
    paymentMethod: 'pm_card_visa',
    idempotencyKey: `charge-${randomUUID()}`,
    ...overrides,
  };
}

function settlementOf(delivery: { status: number; body: string }): SettlementEvent | null {
  assert.equal(delivery.status, 200, delivery.body);
  return (JSON.parse(delivery.body) as { settlement: SettlementEvent | null }).settlement;
}

describe('Stripe payments adapter (stripe SDK against the local fake Stripe)', () => {
  let fake: FakeStripe;
  let provider: PaymentsProvider;
  let receiver: WebhookReceiver;

  const eventOf = (type: string, paymentIntentId: string): FakeStripeEvent => {
    const event = fake.events().find((e) => e.type === type && e.data.object.id === paymentIntentId);
    assert.ok(event, `the fake recorded ${type} for ${paymentIntentId}`);
    return event;
  };

  before(async () => {
    fake = await startFakeStripe({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, publishableKey: PUBLISHABLE_KEY });
    provider = createStripePayments({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, apiBaseUrl: fake.baseUrl });
    receiver = await startWebhookReceiver(provider);
  });
  after(async () => {
    await receiver.close();
    await fake.close();
  });

  it('charges pm_card_visa as pending (never succeeded) and settles it from the signed payment_intent.succeeded event', async () => {
    const request = chargeRequest();
    const result = await provider.charge(request);
    assert.equal(provider.name, 'stripe');
    assert.equal(result.status, 'pending');
    assert.match(result.providerRef ?? '', /^pi_/);
    assert.equal('checkoutUrl' in result, false);

    const sent = fake.requests.findLast((r) => r.path === '/v1/payment_intents');
    assert.ok(sent);
    assert.equal(sent.idempotencyKey, request.idempotencyKey);
    assert.deepEqual(sent.params, {
      amount: '1234',
      currency: 'usd',
      confirm: 'true',
      payment_method: 'pm_card_visa',
      metadata: { payment_id: request.paymentId, workspace_id: request.workspaceId },
      automatic_payment_methods: { enabled: 'true', allow_redirects: 'never' },
    });
    assert.equal(fake.paymentIntents().find((pi) => pi.id === result.providerRef)?.status, 'succeeded');

    const event = eventOf('payment_intent.succeeded', result.providerRef ?? '');
    const [first, again] = await fake.deliver(receiver.url, event, { duplicate: true });
    const expected: SettlementEvent = { eventId: event.id, outcome: 'succeeded', providerRef: result.providerRef ?? '', paymentId: request.paymentId, amountCents: 1234 };
    assert.deepEqual(settlementOf(first), expected);
    // Stripe delivers at least once: a duplicate verifies to the same event id, for the module to dedupe.
    assert.deepEqual(settlementOf(again), expected);
  });

  for (const paymentMethod of ['pm_card_declined', 'pm_card_chargeDeclined']) {
    it(`reports ${paymentMethod} as failed with the decline, and its payment_failed event as a failed settlement`, async () => {
      const request = chargeRequest({ paymentMethod, amountCents: 5000 });
      const result = await provider.charge(request);
      assert.equal(result.status, 'failed');
      assert.match(result.providerRef ?? '', /^pi_/);
      assert.equal(result.status === 'failed' && result.reason, 'Your card was declined.');
      assert.equal(fake.paymentIntents().find((pi) => pi.id === result.providerRef)?.status, 'requires_payment_method');

      const [delivery] = await fake.deliver(receiver.url, eventOf('payment_intent.payment_failed', result.providerRef ?? ''));
      const settlement = settlementOf(delivery);
      assert.equal(settlement?.outcome, 'failed');
      assert.equal(settlement?.paymentId, request.paymentId);
      assert.equal(settlement?.amountCents, 5000);
      assert.equal(settlement?.reason, 'Your card was declined.');
    });
  }

  it('creates one PaymentIntent for the same idempotency key, and refuses that key with other parameters', async () => {
    const request = chargeRequest();
    const first = await provider.charge(request);
    const retried = await provider.charge(request);
    assert.equal(retried.providerRef, first.providerRef);
    assert.equal(fake.paymentIntents().filter((pi) => pi.metadata.payment_id === request.paymentId).length, 1);
    assert.equal(fake.requests.findLast((r) => r.idempotencyKey === request.idempotencyKey)?.replayed, true);

    await assert.rejects(provider.charge({ ...request, amountCents: 9999 }), (error: unknown) => error instanceof Stripe.errors.StripeIdempotencyError);
    assert.equal(fake.paymentIntents().filter((pi) => pi.metadata.payment_id === request.paymentId).length, 1);
  });

  it('charges a customer off-session, and reports a card needing authentication off-session as failed', async () => {
    const stripe = new Stripe(SECRET_KEY, { host: '127.0.0.1', port: new URL(fake.baseUrl).port, protocol: 'http' });
    const customer = await stripe.customers.create({ email: 'owner@example.com' });
    const request = chargeRequest({ customerRef: customer.id, offSession: true });
    const result = await provider.charge(request);
    assert.equal(result.status, 'pending');
    const sent = fake.requests.findLast((r) => r.idempotencyKey === request.idempotencyKey);
    assert.equal(sent?.params.customer, customer.id);
    assert.equal(sent?.params.off_session, 'true');

    const declined = await provider.charge(chargeRequest({ customerRef: customer.id, offSession: true, paymentMethod: 'pm_card_authenticationRequired' }));
    assert.equal(declined.status, 'failed');
    assert.match(declined.status === 'failed' ? declined.reason : '', /requires authentication/);
  });

  it('leaves a charge needing 3-D Secure pending until the customer acts and the webhook settles it', async () => {
    const request = chargeRequest({ paymentMethod: 'pm_card_authenticationRequired' });
    const result = await provider.charge(request);
    // Without a return_url Stripe asks for Stripe.js (use_stripe_sdk), not a redirect: no URL to give.
    assert.deepEqual(result, { status: 'pending', providerRef: result.providerRef });
    assert.equal(fake.paymentIntents().find((pi) => pi.id === result.providerRef)?.status, 'requires_action');

    const event = fake.completeCustomerAction(result.providerRef ?? '', 'succeeded');
    const settlement = settlementOf((await fake.deliver(receiver.url, event))[0]);
    assert.equal(settlement?.outcome, 'succeeded');
    assert.equal(settlement?.paymentId, request.paymentId);
  });

  it('fails an off-session charge without a payment method before calling Stripe', async () => {
    const before = fake.requests.length;
    const result = await provider.charge(chargeRequest({ paymentMethod: undefined, offSession: true }));
    assert.equal(result.status, 'failed');
    assert.equal(result.providerRef, null);
    assert.equal(fake.requests.length, before);
  });

  it('without a payment method creates the PaymentIntent unconfirmed: pending with its client secret, confirmed in the browser, settled by the webhook', async () => {
    const request = chargeRequest({ paymentMethod: undefined });
    const result = await provider.charge(request);
    assert.equal(result.status, 'pending');
    const clientSecret = result.status === 'pending' ? (result.clientSecret ?? '') : '';
    assert.match(clientSecret, new RegExp(`^${result.providerRef}_secret_`));
    const sent = fake.requests.findLast((r) => r.path === '/v1/payment_intents');
    assert.equal(sent?.idempotencyKey, request.idempotencyKey);
    assert.deepEqual(sent?.params, {
      amount: '1234',
      currency: 'usd',
      metadata: { payment_id: request.paymentId, workspace_id: request.workspaceId },
      automatic_payment_methods: { enabled: 'true', allow_redirects: 'never' },
    });
    assert.equal(fake.paymentIntents().find((pi) => pi.id === result.providerRef)?.status, 'requires_payment_method');
    // A retry with the same key answers the same PaymentIntent and secret.
    assert.deepEqual(await provider.charge(request), result);

    // The publishable key needs the right client secret; with it, the card is charged.
    assert.equal((await confirmInBrowser(fake, `${result.providerRef}_secret_wrong`, 'pm_card_visa')).status, 404);
    const confirmed = await confirmInBrowser(fake, clientSecret, 'pm_card_visa');
    assert.deepEqual([confirmed.status, confirmed.body.status, confirmed.cors], [200, 'succeeded', '*']);
    assert.equal((await confirmInBrowser(fake, clientSecret, 'pm_card_visa')).body.error?.code, 'payment_intent_unexpected_state', 'confirmed once');
    const settlement = settlementOf((await fake.deliver(receiver.url, eventOf('payment_intent.succeeded', result.providerRef ?? '')))[0]);
    assert.deepEqual(settlement && [settlement.outcome, settlement.paymentId, settlement.amountCents], ['succeeded', request.paymentId, 1234]);
  });

  it('a card declined in the browser leaves the PaymentIntent to try again; the publishable key may do nothing else', async () => {
    const result = await provider.charge(chargeRequest({ paymentMethod: undefined }));
    const clientSecret = result.status === 'pending' ? (result.clientSecret ?? '') : '';
    const declined = await confirmInBrowser(fake, clientSecret, 'pm_card_chargeDeclined');
    assert.deepEqual([declined.status, declined.body.error?.code], [402, 'card_declined']);
    assert.equal((await confirmInBrowser(fake, clientSecret, 'pm_card_visa')).body.status, 'succeeded', 'another card, same PaymentIntent');
    const create = await fetch(`${fake.baseUrl}/v1/payment_intents`, { method: 'POST', headers: { authorization: `Bearer ${PUBLISHABLE_KEY}` }, body: 'amount=500&currency=usd' });
    assert.equal(create.status, 401);
  });

  it('serves a fake Stripe.js at /v3/ that confirms against this fake', async () => {
    const script = await fetch(`${fake.baseUrl}/v3/`);
    assert.match(String(script.headers.get('content-type')), /^text\/javascript/);
    const source = await script.text();
    assert.ok(source.includes(JSON.stringify(fake.baseUrl)) && source.includes('window.Stripe'));
    const preflight = await fetch(`${fake.baseUrl}/v1/payment_intents/pi_x/confirm`, { method: 'OPTIONS' });
    assert.deepEqual([preflight.status, preflight.headers.get('access-control-allow-origin')], [204, '*']);
  });

  it('rejects a wrong signature, a tampered body, a missing header and an expired timestamp', async () => {
    const { providerRef } = await provider.charge(chargeRequest());
    const event = eventOf('payment_intent.succeeded', providerRef ?? '');
    const payload = JSON.stringify(event, null, 2);
    const isInvalidSignature = (error: unknown) => error instanceof InvalidWebhookSignature;
    const verify = (body: string, header: string | undefined) => () => provider.verifyWebhook(Buffer.from(body), header);

    // The control: the same payload, correctly signed now, verifies.
    assert.equal(verify(payload, stripeSignatureHeader(payload, WEBHOOK_SECRET))()?.eventId, event.id);
    assert.throws(verify(payload, stripeSignatureHeader(payload, 'whsec_someone_else')), isInvalidSignature);
    assert.throws(verify(payload.replace('"amount": 1234', '"amount": 123400'), stripeSignatureHeader(payload, WEBHOOK_SECRET)), isInvalidSignature);
    assert.throws(verify(payload, undefined), isInvalidSignature);
    assert.throws(verify(payload, ''), isInvalidSignature);
    assert.throws(verify(payload, 'garbage'), isInvalidSignature);
    const sixMinutesAgo = Math.floor(Date.now() / 1000) - 360;
    assert.throws(verify(payload, stripeSignatureHeader(payload, WEBHOOK_SECRET, sixMinutesAgo)), isInvalidSignature);

    // The same checks over HTTP, as Stripe (or a forger) would send them.
    assert.equal((await fake.deliver(receiver.url, event, { tamper: true }))[0].status, 400);
    assert.equal((await fake.deliver(receiver.url, event, { signedAt: sixMinutesAgo }))[0].status, 400);
    assert.equal((await fake.deliver(receiver.url, event, { secret: 'whsec_someone_else' }))[0].status, 400);
  });

  it('answers null for events that settle nothing: other types, and other currencies', async () => {
    const { providerRef } = await provider.charge(chargeRequest());
    const created = eventOf('payment_intent.created', providerRef ?? '');
    assert.equal(settlementOf((await fake.deliver(receiver.url, created))[0]), null);

    const euros = eventOf('payment_intent.succeeded', providerRef ?? '');
    euros.data.object.currency = 'eur';
    assert.equal(settlementOf((await fake.deliver(receiver.url, euros))[0]), null);
  });

  it("surfaces the SDK's authentication error for a wrong secret key, creating nothing", async () => {
    const wrongKey = createStripePayments({ secretKey: 'sk_test_not_the_right_key', webhookSecret: WEBHOOK_SECRET, apiBaseUrl: fake.baseUrl });
    const request = chargeRequest();
    await assert.rejects(wrongKey.charge(request), (error: unknown) => error instanceof Stripe.errors.StripeAuthenticationError);
    const sent = fake.requests.findLast((r) => r.idempotencyKey === request.idempotencyKey);
    assert.equal(sent?.status, 401);
    assert.equal(sent?.authenticated, false);
    assert.equal(fake.paymentIntents().some((pi) => pi.metadata.payment_id === request.paymentId), false);
  });

  it('refuses an apiBaseUrl with a path, which the SDK would silently drop', () => {
    assert.throws(() => createStripePayments({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, apiBaseUrl: `${fake.baseUrl}/v1` }));
  });
});
