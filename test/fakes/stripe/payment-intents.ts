import type { FormObject } from './form.ts';
import {
  errorAnswer,
  type FakeCustomer,
  type FakeLastPaymentError,
  type FakePaymentIntent,
  type FakeStripeEvent,
  newStripeId,
  ParamError,
  readBoolean,
  readInteger,
  readMetadata,
  readObject,
  readRequiredString,
  readString,
  type StripeAnswer,
  unixNow,
} from './objects.ts';

// The fake Stripe's PaymentIntents: create (optionally confirming at once), retrieve, and the
// outcome of Stripe's test payment methods (docs.stripe.com/testing). Every state a confirmation
// reaches is recorded as an Event carrying a snapshot of the PaymentIntent, as Stripe does.

type CardBehaviour =
  | { outcome: 'succeed' }
  | { outcome: 'decline'; code: string; declineCode: string; message: string }
  /** 3-D Secure on every payment: requires_action on-session, a decline off-session. */
  | { outcome: 'authenticate' };

const SUCCEED: CardBehaviour = { outcome: 'succeed' };
const GENERIC_DECLINE: CardBehaviour = { outcome: 'decline', code: 'card_declined', declineCode: 'generic_decline', message: 'Your card was declined.' };

/** Stripe's test PaymentMethods the fake knows; any other id is "No such PaymentMethod". */
export const FAKE_TEST_PAYMENT_METHODS: Readonly<Record<string, CardBehaviour>> = {
  pm_card_visa: SUCCEED,
  pm_card_visa_debit: SUCCEED,
  pm_card_mastercard: SUCCEED,
  pm_card_amex: SUCCEED,
  pm_card_chargeDeclined: GENERIC_DECLINE,
  // Not a Stripe name: our sandbox provider's declining method, accepted so one name works with both.
  pm_card_declined: GENERIC_DECLINE,
  pm_card_chargeDeclinedInsufficientFunds: {
    outcome: 'decline',
    code: 'card_declined',
    declineCode: 'insufficient_funds',
    message: 'Your card has insufficient funds.',
  },
  pm_card_chargeDeclinedExpiredCard: { outcome: 'decline', code: 'expired_card', declineCode: 'expired_card', message: 'Your card has expired.' },
  pm_card_authenticationRequired: { outcome: 'authenticate' },
};

const OFF_SESSION_AUTHENTICATION: CardBehaviour = {
  outcome: 'decline',
  code: 'authentication_required',
  declineCode: 'authentication_required',
  message: 'Your card was declined. This transaction requires authentication.',
};

/** Everything the fake holds, shared by its routes. */
export interface FakeLedger {
  paymentIntents: Map<string, FakePaymentIntent>;
  customers: Map<string, FakeCustomer>;
  events: FakeStripeEvent[];
}

/** What an event records of the API request that caused it. */
export interface FakeRequestContext {
  apiVersion: string;
  requestId: string | null;
  idempotencyKey: string | null;
  baseUrl: string;
}

function recordEvent(ledger: FakeLedger, type: string, intent: FakePaymentIntent, context: FakeRequestContext): void {
  ledger.events.push({
    id: newStripeId('evt'),
    object: 'event',
    api_version: context.apiVersion,
    created: unixNow(),
    // Events are immutable snapshots: later changes of the PaymentIntent do not reach them.
    data: { object: structuredClone(intent) },
    livemode: false,
    pending_webhooks: 1,
    request: { id: context.requestId, idempotency_key: context.idempotencyKey },
    type,
  });
}

interface CreateParams {
  amount: number;
  currency: string;
  customer: string | null;
  paymentMethod: string | null;
  confirm: boolean;
  offSession: boolean;
  returnUrl: string | null;
  description: string | null;
  metadata: Record<string, string>;
  automaticPaymentMethods: FakePaymentIntent['automatic_payment_methods'];
  paymentMethodTypes: string[];
}

function readAutomaticPaymentMethods(params: FormObject): FakePaymentIntent['automatic_payment_methods'] {
  const given = readObject(params, 'automatic_payment_methods');
  // Since 2023 API versions a PaymentIntent without payment_method_types uses automatic methods.
  if (!given) return params['payment_method_types'] === undefined ? { enabled: true } : null;
  const enabled = readBoolean(given, 'enabled');
  if (enabled === undefined) throw new ParamError('Missing required param: automatic_payment_methods[enabled].', 'automatic_payment_methods[enabled]');
  const allowRedirects = readString(given, 'allow_redirects');
  if (allowRedirects !== undefined && allowRedirects !== 'always' && allowRedirects !== 'never') {
    throw new ParamError(`Invalid automatic_payment_methods[allow_redirects]: must be one of always or never`, 'automatic_payment_methods[allow_redirects]');
  }
  return allowRedirects ? { enabled, allow_redirects: allowRedirects } : { enabled };
}

function readPaymentMethodTypes(params: FormObject): string[] {
  const given = params['payment_method_types'];
  if (given === undefined) return ['card'];
  if (!Array.isArray(given) || !given.every((t) => typeof t === 'string')) throw new ParamError('Invalid array', 'payment_method_types');
  return given as string[];
}

function readCreateParams(params: FormObject, ledger: FakeLedger): CreateParams {
  const amount = readInteger(params, 'amount');
  if (amount === undefined) throw new ParamError('Missing required param: amount.', 'amount', 'parameter_missing');
  const currency = readRequiredString(params, 'currency').toLowerCase();
  if (!/^[a-z]{3}$/.test(currency)) throw new ParamError(`Invalid currency: ${currency}`, 'currency');
  if (currency === 'usd' && amount < 50) throw new ParamError('Amount must be at least $0.50 usd', 'amount', 'amount_too_small');
  if (amount > 99_999_999) throw new ParamError('Amount must be no more than $999,999.99', 'amount', 'amount_too_large');
  const customer = readString(params, 'customer') ?? null;
  if (customer !== null && !ledger.customers.has(customer)) throw new ParamError(`No such customer: '${customer}'`, 'customer', 'resource_missing');
  const paymentMethod = readString(params, 'payment_method') ?? null;
  if (paymentMethod !== null && !(paymentMethod in FAKE_TEST_PAYMENT_METHODS)) {
    throw new ParamError(`No such PaymentMethod: '${paymentMethod}'`, 'payment_method', 'resource_missing');
  }
  const confirm = readBoolean(params, 'confirm') ?? false;
  const offSession = readBoolean(params, 'off_session') ?? false;
  if (offSession && !confirm) throw new ParamError('off_session can only be used when confirm=true.', 'off_session');
  return {
    amount,
    currency,
    customer,
    paymentMethod,
    confirm,
    offSession,
    returnUrl: readString(params, 'return_url') ?? null,
    description: readString(params, 'description') ?? null,
    metadata: readMetadata(params),
    automaticPaymentMethods: readAutomaticPaymentMethods(params),
    paymentMethodTypes: readPaymentMethodTypes(params),
  };
}

// Checks Stripe makes before confirming, reported as 400s that leave no PaymentIntent behind.
function checkConfirmable(create: CreateParams): void {
  if (create.paymentMethod === null) {
    throw new ParamError(
      "You cannot confirm this PaymentIntent because it's missing a payment method. To confirm the PaymentIntent, pass a payment_method.",
      'payment_method',
    );
  }
  const automatic = create.automaticPaymentMethods;
  if (automatic?.enabled && automatic.allow_redirects !== 'never' && create.returnUrl === null) {
    throw new ParamError(
      'This PaymentIntent is configured to accept payment methods enabled in your Dashboard. Because some of these payment methods might redirect your customer off of your page, you must provide a `return_url`. If you don\'t want to accept redirect-based payment methods, set `automatic_payment_methods[enabled]` to `true` and `automatic_payment_methods[allow_redirects]` to `never` when creating Setup Intents and Payment Intents.',
      'return_url',
    );
  }
}

function newPaymentIntent(create: CreateParams): FakePaymentIntent {
  const id = newStripeId('pi');
  return {
    id,
    object: 'payment_intent',
    amount: create.amount,
    amount_capturable: 0,
    amount_received: 0,
    automatic_payment_methods: create.automaticPaymentMethods,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: 'automatic_async',
    client_secret: `${id}_secret_${newStripeId('cs').slice(3)}`,
    confirmation_method: 'automatic',
    created: unixNow(),
    currency: create.currency,
    customer: create.customer,
    description: create.description,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    metadata: create.metadata,
    next_action: null,
    payment_method: create.paymentMethod,
    payment_method_types: create.paymentMethodTypes,
    setup_future_usage: null,
    status: create.paymentMethod === null ? 'requires_payment_method' : 'requires_confirmation',
  };
}

function decline(intent: FakePaymentIntent, behaviour: Extract<CardBehaviour, { outcome: 'decline' }>): FakeLastPaymentError {
  const charge = newStripeId('ch');
  const error: FakeLastPaymentError = {
    type: 'card_error',
    code: behaviour.code,
    decline_code: behaviour.declineCode,
    message: behaviour.message,
    doc_url: `https://docs.stripe.com/error-codes/${behaviour.code.replaceAll('_', '-')}`,
    charge,
    payment_method: { id: intent.payment_method ?? '', object: 'payment_method', type: 'card' },
  };
  intent.status = 'requires_payment_method';
  intent.latest_charge = charge;
  intent.last_payment_error = error;
  return error;
}

function confirm(ledger: FakeLedger, intent: FakePaymentIntent, create: CreateParams, context: FakeRequestContext): StripeAnswer {
  const known = FAKE_TEST_PAYMENT_METHODS[create.paymentMethod ?? ''];
  const behaviour = known.outcome === 'authenticate' && create.offSession ? OFF_SESSION_AUTHENTICATION : known;
  if (behaviour.outcome === 'succeed') {
    intent.status = 'succeeded';
    intent.amount_received = intent.amount;
    intent.latest_charge = newStripeId('ch');
    recordEvent(ledger, 'payment_intent.succeeded', intent, context);
    return { status: 200, body: intent, savedForIdempotency: true };
  }
  if (behaviour.outcome === 'authenticate') {
    intent.status = 'requires_action';
    // Stripe answers a redirect only when it has somewhere to send the customer back to.
    intent.next_action = create.returnUrl
      ? { type: 'redirect_to_url', redirect_to_url: { url: `${context.baseUrl}/authenticate/${intent.id}`, return_url: create.returnUrl } }
      : { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: `${context.baseUrl}/authenticate/${intent.id}` } };
    recordEvent(ledger, 'payment_intent.requires_action', intent, context);
    return { status: 200, body: intent, savedForIdempotency: true };
  }
  const { type, code, decline_code, message, doc_url, charge, payment_method } = decline(intent, behaviour);
  recordEvent(ledger, 'payment_intent.payment_failed', intent, context);
  // A decline is a result of executing the request: Stripe replays it for the same key.
  return errorAnswer(402, { type, code, decline_code, message, doc_url, charge, payment_method, payment_intent: structuredClone(intent) }, true);
}

/** `POST /v1/payment_intents`. Throws ParamError for a request Stripe rejects with a 400. */
export function createPaymentIntent(ledger: FakeLedger, params: FormObject, context: FakeRequestContext): StripeAnswer {
  const create = readCreateParams(params, ledger);
  if (create.confirm) checkConfirmable(create);
  const intent = newPaymentIntent(create);
  ledger.paymentIntents.set(intent.id, intent);
  recordEvent(ledger, 'payment_intent.created', intent, context);
  if (!create.confirm) return { status: 200, body: intent, savedForIdempotency: true };
  return confirm(ledger, intent, create, context);
}

/** `GET /v1/payment_intents/{id}`. */
export function retrievePaymentIntent(ledger: FakeLedger, id: string): StripeAnswer {
  const intent = ledger.paymentIntents.get(id);
  if (!intent) {
    return errorAnswer(404, { type: 'invalid_request_error', code: 'resource_missing', param: 'intent', message: `No such payment_intent: '${id}'` });
  }
  return { status: 200, body: intent, savedForIdempotency: true };
}

/**
 * What the customer does at a requires_action PaymentIntent (3-D Secure): passing settles it as
 * succeeded, failing sends it back to requires_payment_method. Answers the event it recorded.
 */
export function completeCustomerAction(
  ledger: FakeLedger,
  id: string,
  outcome: 'succeeded' | 'failed',
  context: FakeRequestContext,
): FakeStripeEvent {
  const intent = ledger.paymentIntents.get(id);
  if (intent?.status !== 'requires_action') throw new Error(`fake Stripe: ${id} is not awaiting a customer action`);
  intent.next_action = null;
  if (outcome === 'succeeded') {
    intent.status = 'succeeded';
    intent.amount_received = intent.amount;
    intent.latest_charge = newStripeId('ch');
    recordEvent(ledger, 'payment_intent.succeeded', intent, context);
  } else {
    intent.status = 'requires_payment_method';
    intent.last_payment_error = {
      type: 'card_error',
      code: 'payment_intent_authentication_failure',
      message: 'We are unable to authenticate your payment method. Please choose a different payment method and try again.',
      doc_url: 'https://docs.stripe.com/error-codes/payment-intent-authentication-failure',
      payment_method: { id: intent.payment_method ?? '', object: 'payment_method', type: 'card' },
    };
    recordEvent(ledger, 'payment_intent.payment_failed', intent, context);
  }
  return ledger.events[ledger.events.length - 1];
}

const CONFIRMABLE: ReadonlySet<string> = new Set(['requires_payment_method', 'requires_confirmation']);

/**
 * `POST /v1/payment_intents/{id}/confirm`, as Stripe.js calls it from the customer's browser (the
 * publishable key and the PaymentIntent's `client_secret`) or a server with the secret key.
 * `byClientSecret`: the caller holds only the publishable key, so the client secret must match.
 */
export function confirmPaymentIntent(ledger: FakeLedger, id: string, params: FormObject, context: FakeRequestContext, byClientSecret: boolean): StripeAnswer {
  const intent = ledger.paymentIntents.get(id);
  const clientSecret = readString(params, 'client_secret');
  if (!intent || (byClientSecret && clientSecret !== intent.client_secret)) {
    // Stripe answers the same for an unknown intent and a wrong secret: nothing to learn from it.
    return errorAnswer(404, { type: 'invalid_request_error', code: 'resource_missing', param: 'intent', message: `No such payment_intent: '${id}'` });
  }
  if (!CONFIRMABLE.has(intent.status)) {
    return errorAnswer(400, {
      type: 'invalid_request_error',
      code: 'payment_intent_unexpected_state',
      message: `You cannot confirm this PaymentIntent because it has a status of ${intent.status}.`,
      payment_intent: structuredClone(intent),
    });
  }
  const paymentMethod = readString(params, 'payment_method') ?? intent.payment_method;
  if (paymentMethod !== null && !(paymentMethod in FAKE_TEST_PAYMENT_METHODS)) {
    throw new ParamError(`No such PaymentMethod: '${paymentMethod}'`, 'payment_method', 'resource_missing');
  }
  const create: CreateParams = {
    amount: intent.amount,
    currency: intent.currency,
    customer: intent.customer,
    paymentMethod,
    confirm: true,
    offSession: readBoolean(params, 'off_session') ?? false,
    returnUrl: readString(params, 'return_url') ?? null,
    description: intent.description,
    metadata: intent.metadata,
    automaticPaymentMethods: intent.automatic_payment_methods,
    paymentMethodTypes: intent.payment_method_types,
  };
  checkConfirmable(create);
  intent.payment_method = paymentMethod;
  intent.last_payment_error = null;
  return confirm(ledger, intent, create, context);
}
