import Stripe from 'stripe';
import { type ChargeRequest, type ChargeResult, InvalidWebhookSignature, type PaymentsProvider, type SettlementEvent } from '../../ports/payments.ts';

// The Stripe payment provider (PAYMENTS_PROVIDER=stripe), through the official SDK. A charge with
// a payment method is a PaymentIntent created and confirmed in one call; without one (a top-up
// from the dashboard) the PaymentIntent is created unconfirmed and its client secret goes back to
// the customer's browser, which confirms it with Stripe.js. Its answer never settles anything: even a
// `succeeded` PaymentIntent is reported as pending, because the wallet is credited only from a
// verified `payment_intent.succeeded` webhook event, so a charge is credited exactly once whether
// or not its HTTP answer got back to us.

export interface StripePaymentsOptions {
  /** The account's secret key (`sk_test_…` / `sk_live_…`) or a restricted key (`rk_…`). */
  secretKey: string;
  /** The webhook endpoint's signing secret (`whsec_…`). */
  webhookSecret: string;
  /** Origin of the API (default `https://api.stripe.com`); the fake Stripe's `baseUrl` in tests. */
  apiBaseUrl?: string;
  /** Per request, in milliseconds (default 30 s; the SDK's own default is 80 s). */
  timeoutMs?: number;
}

/** The only currency our wallet is kept in; amounts are its cents. */
const CURRENCY = 'usd';

function hostConfig(apiBaseUrl: string | undefined): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  if (!apiBaseUrl) return {};
  const url = new URL(apiBaseUrl);
  // The SDK always requests `/v1/…` from the root, so a base URL with a path would be ignored.
  if (url.pathname !== '/' || url.search) throw new Error(`Stripe apiBaseUrl must be an origin (scheme://host[:port]), got ${apiBaseUrl}`);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: url.port || (protocol === 'http' ? 80 : 443), protocol };
}

function fromPaymentIntent(intent: Stripe.PaymentIntent): ChargeResult {
  switch (intent.status) {
    case 'succeeded':
    case 'processing':
    // Not used by us (automatic capture), but funds are held: the webhook settles it.
    case 'requires_capture':
    // 3-D Secure: we send no return_url (redirects are excluded), so Stripe asks for Stripe.js
    // (use_stripe_sdk), never a redirect; the webhook settles the outcome.
    case 'requires_action':
      return { status: 'pending', providerRef: intent.id };
    default:
      // requires_payment_method (declined), requires_confirmation, canceled: nothing was charged.
      return { status: 'failed', providerRef: intent.id, reason: intent.last_payment_error?.message ?? `payment ${intent.status}` };
  }
}

function paymentIntentParams(request: ChargeRequest, paymentMethod: string): Stripe.PaymentIntentCreateParams {
  return {
    amount: request.amountCents,
    currency: CURRENCY,
    confirm: true,
    payment_method: paymentMethod,
    ...(request.customerRef ? { customer: request.customerRef } : {}),
    ...(request.offSession ? { off_session: true } : {}),
    metadata: { payment_id: request.paymentId, workspace_id: request.workspaceId },
    // Confirming on the server without a return_url is only allowed once redirect-based methods
    // (bank redirects, wallets) are excluded; cards may still ask for 3-D Secure (requires_action).
    automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
  };
}

/** A PaymentIntent the customer confirms in the browser (Stripe.js), with the card they enter there. */
function unconfirmedParams(request: ChargeRequest): Stripe.PaymentIntentCreateParams {
  return {
    amount: request.amountCents,
    currency: CURRENCY,
    ...(request.customerRef ? { customer: request.customerRef } : {}),
    metadata: { payment_id: request.paymentId, workspace_id: request.workspaceId },
    // No redirect-based methods: the page confirms with `redirect: 'if_required'` and stays put.
    automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
  };
}

function toSettlement(event: Stripe.Event): SettlementEvent | null {
  if (event.type !== 'payment_intent.succeeded' && event.type !== 'payment_intent.payment_failed') return null;
  const intent = event.data.object;
  // Another currency's cents are not USD cents: such a PaymentIntent was not made by us.
  if (intent.currency !== CURRENCY) return null;
  const common = { eventId: event.id, providerRef: intent.id, paymentId: intent.metadata?.payment_id ?? null };
  if (event.type === 'payment_intent.succeeded') {
    return { ...common, outcome: 'succeeded', amountCents: intent.amount_received || intent.amount };
  }
  return { ...common, outcome: 'failed', amountCents: intent.amount, reason: intent.last_payment_error?.message ?? 'The payment failed.' };
}

export function createStripePayments(options: StripePaymentsOptions): PaymentsProvider {
  const stripe = new Stripe(options.secretKey, {
    ...hostConfig(options.apiBaseUrl),
    // Safe to retry: every POST carries an Idempotency-Key (ours for charges).
    maxNetworkRetries: 2,
    timeout: options.timeoutMs ?? 30_000,
    telemetry: false,
  });

  return {
    name: 'stripe',

    async charge(request: ChargeRequest): Promise<ChargeResult> {
      if (!request.paymentMethod) {
        // Stripe has no account-wide default method for a PaymentIntent (a customer's invoice
        // default applies to invoices only): with nobody present there is nothing to charge.
        if (request.offSession) return { status: 'failed', providerRef: null, reason: 'A payment method (pm_…) is required to charge with Stripe off session.' };
        const intent = await stripe.paymentIntents.create(unconfirmedParams(request), { idempotencyKey: request.idempotencyKey });
        if (!intent.client_secret) throw new Error(`Stripe answered PaymentIntent ${intent.id} without a client_secret`);
        return { status: 'pending', providerRef: intent.id, clientSecret: intent.client_secret };
      }
      try {
        const intent = await stripe.paymentIntents.create(paymentIntentParams(request, request.paymentMethod), {
          idempotencyKey: request.idempotencyKey,
        });
        return fromPaymentIntent(intent);
      } catch (error) {
        // A decline is an answer, not a fault: a 402 card_error carrying the PaymentIntent it failed.
        if (error instanceof Stripe.errors.StripeCardError) {
          return { status: 'failed', providerRef: error.payment_intent?.id ?? null, reason: error.message };
        }
        throw error;
      }
    },

    verifyWebhook(rawBody: Buffer, signatureHeader: string | undefined): SettlementEvent | null {
      if (!signatureHeader) throw new InvalidWebhookSignature('The Stripe-Signature header is missing.');
      let event: Stripe.Event;
      try {
        // Checks the v1 HMAC of the raw bytes and that the timestamp is within 300 s (replays).
        event = stripe.webhooks.constructEvent(rawBody, signatureHeader, options.webhookSecret);
      } catch (error) {
        if (error instanceof Stripe.errors.StripeSignatureVerificationError) throw new InvalidWebhookSignature(error.message);
        throw error;
      }
      return toSettlement(event);
    },
  };
}
