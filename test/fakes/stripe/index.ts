import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { canonicalParams, decodeStripeForm, FormDecodeError, type FormObject } from './form.ts';
import {
  errorAnswer,
  FAKE_STRIPE_API_VERSION,
  type FakeCustomer,
  type FakePaymentIntent,
  type FakeStripeEvent,
  newStripeId,
  ParamError,
  paramErrorAnswer,
  readMetadata,
  readString,
  type StripeAnswer,
  unixNow,
} from './objects.ts';
import { fakeStripeJs } from './js.ts';
import {
  completeCustomerAction,
  confirmPaymentIntent,
  createPaymentIntent,
  type FakeLedger,
  type FakeRequestContext,
  retrievePaymentIntent,
} from './payment-intents.ts';
import { type DeliverOptions, type Delivery, deliverEvent } from './webhooks.ts';

// A local server speaking Stripe's v1 REST API as the official `stripe` SDK uses it, for tests of
// the Stripe payments adapter and of the payments module: Bearer secret-key auth, form-encoded
// bodies, Idempotency-Key replay, PaymentIntents with Stripe's test payment methods, Customers,
// Events, and webhook delivery signed like Stripe's. Point the SDK at `baseUrl`
// (host/port/protocol); the SDK itself adds the `/v1/…` paths. For browser tests it also serves a
// fake Stripe.js at `/v3/` (js.ts) whose confirmations come back here from the page
// (CORS, the publishable key and the PaymentIntent's client secret), and it can deliver every
// event to a webhook URL by itself, as Stripe does.

export interface FakeStripeOptions {
  /** The only API key accepted (`sk_test_…`); any other is a 401. */
  secretKey: string;
  /** The webhook endpoint's signing secret (`whsec_…`) deliveries are signed with. */
  webhookSecret: string;
  /** The publishable key (`pk_test_…`) Stripe.js uses: it may only confirm or read a PaymentIntent whose client secret it gives. */
  publishableKey?: string;
  /** Where every event is POSTed, signed, in order, as soon as it happens (unset: only by `deliver`). */
  webhookUrl?: string;
}

/** One API request the fake received, for assertions. */
export interface FakeStripeRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/payment_intents`. */
  path: string;
  /** The decoded form body (POST) or query (GET), leaves as strings: `params.metadata.payment_id`. */
  params: FormObject;
  idempotencyKey: string | null;
  stripeVersion: string | null;
  authenticated: boolean;
  status: number;
  /** Answered from the saved result of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

export interface FakeStripe {
  /** `http://127.0.0.1:<port>`: the origin to give the SDK (or the adapter's apiBaseUrl). */
  baseUrl: string;
  requests: FakeStripeRequest[];
  /** Every PaymentIntent, oldest first (copies: mutate them freely). */
  paymentIntents(): FakePaymentIntent[];
  /** Every Event, oldest first: `payment_intent.created`, then the confirmation's outcome. */
  events(): FakeStripeEvent[];
  /** The answers of the automatic deliveries to `webhookUrl` so far (and a promise of the ones in flight). */
  delivered(): Promise<Delivery[]>;
  /** POSTs an event to a webhook URL, signed like Stripe; answers each attempt's status and body. */
  deliver(url: string, event: FakeStripeEvent, options?: DeliverOptions): Promise<Delivery[]>;
  /** The customer passes or fails 3-D Secure on a requires_action PaymentIntent; answers the new Event. */
  completeCustomerAction(paymentIntentId: string, outcome: 'succeeded' | 'failed'): FakeStripeEvent;
  close(): Promise<void>;
}

interface SavedResult {
  method: string;
  path: string;
  fingerprint: string;
  status: number;
  /** Serialised when first answered: a replay answers the object as it was then. */
  body: string;
}

function maskedKey(key: string): string {
  return key.length > 8 ? `${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}` : '****';
}

// Stripe accepts the secret key as a Bearer token or as the Basic-auth user name (curl -u sk_…:).
function presentedKey(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const [scheme, value = ''] = authorization.split(' ', 2);
  if (scheme.toLowerCase() === 'bearer') return value.trim();
  if (scheme.toLowerCase() === 'basic') return Buffer.from(value, 'base64').toString().split(':')[0];
  return undefined;
}

function authenticationFailure(key: string | undefined): StripeAnswer {
  const message =
    key === undefined
      ? "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY')."
      : `Invalid API Key provided: ${maskedKey(key)}`;
  return errorAnswer(401, { type: 'invalid_request_error', message });
}

function idempotencyConflict(key: string): StripeAnswer {
  return errorAnswer(400, {
    type: 'idempotency_error',
    message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
  });
}

function createCustomer(ledger: FakeLedger, params: FormObject): StripeAnswer {
  const customer: FakeCustomer = {
    id: newStripeId('cus'),
    object: 'customer',
    created: unixNow(),
    email: readString(params, 'email') ?? null,
    name: readString(params, 'name') ?? null,
    description: readString(params, 'description') ?? null,
    metadata: readMetadata(params),
    livemode: false,
  };
  ledger.customers.set(customer.id, customer);
  return { status: 200, body: customer, savedForIdempotency: true };
}

function found(body: unknown, kind: string, id: string): StripeAnswer {
  if (body !== undefined) return { status: 200, body, savedForIdempotency: true };
  return errorAnswer(404, { type: 'invalid_request_error', code: 'resource_missing', param: 'id', message: `No such ${kind}: '${id}'` });
}

function route(ledger: FakeLedger, method: string, path: string, params: FormObject, context: FakeRequestContext): StripeAnswer {
  const [, version, collection, id, ...rest] = path.split('/');
  if (version === 'v1' && method === 'POST' && collection === 'payment_intents' && id && rest.join('/') === 'confirm') {
    return confirmPaymentIntent(ledger, id, params, context, false);
  }
  if (version === 'v1' && rest.length === 0) {
    if (method === 'POST' && collection === 'payment_intents' && id === undefined) return createPaymentIntent(ledger, params, context);
    if (method === 'GET' && collection === 'payment_intents' && id) return retrievePaymentIntent(ledger, id);
    if (method === 'POST' && collection === 'customers' && id === undefined) return createCustomer(ledger, params);
    if (method === 'GET' && collection === 'customers' && id) return found(ledger.customers.get(id), 'customer', id);
    if (method === 'GET' && collection === 'events' && id) return found(ledger.events.find((e) => e.id === id), 'event', id);
  }
  return errorAnswer(404, {
    type: 'invalid_request_error',
    message: `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
  });
}

type Router = (method: string, path: string, params: FormObject, context: FakeRequestContext) => StripeAnswer;

function answerFor(ledger: FakeLedger, method: string, path: string, params: FormObject, context: FakeRequestContext, router?: Router): StripeAnswer {
  try {
    return router ? router(method, path, params, context) : route(ledger, method, path, params, context);
  } catch (error) {
    if (error instanceof ParamError) return paramErrorAnswer(error);
    throw error;
  }
}

async function readBody(request: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function headerValue(request: http.IncomingMessage, name: string): string | null {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : null;
}

interface FakeServerState {
  options: FakeStripeOptions;
  ledger: FakeLedger;
  savedResults: Map<string, SavedResult>;
  requests: FakeStripeRequest[];
  baseUrl: string;
  /** The automatic deliveries, chained so that events arrive in the order they happened. */
  deliveries: Promise<Delivery[]>;
}

// Stripe's API answers browsers from any origin (Stripe.js runs on the merchant's pages).
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'authorization, content-type, stripe-version, idempotency-key',
  'access-control-allow-methods': 'GET, POST, DELETE',
  'access-control-max-age': '600',
};

/** What the publishable key may do: confirm or read one PaymentIntent, with its client secret. */
function publishableAnswer(state: FakeServerState, method: string, path: string, params: FormObject, context: FakeRequestContext): StripeAnswer {
  const [, version, collection, id, ...rest] = path.split('/');
  if (version === 'v1' && collection === 'payment_intents' && id && method === 'POST' && rest.join('/') === 'confirm') {
    return confirmPaymentIntent(state.ledger, id, params, context, true);
  }
  if (version === 'v1' && collection === 'payment_intents' && id && method === 'GET' && rest.length === 0) {
    const intent = state.ledger.paymentIntents.get(id);
    if (intent && params.client_secret === intent.client_secret) return { status: 200, body: intent, savedForIdempotency: false };
    return errorAnswer(404, { type: 'invalid_request_error', code: 'resource_missing', param: 'intent', message: `No such payment_intent: '${id}'` });
  }
  return errorAnswer(401, { type: 'invalid_request_error', message: 'This API call cannot be made with a publishable API key. Please use a secret API key.' });
}

/** Sends the events recorded since `from` to the webhook URL, after the ones already on their way. */
function deliverNewEvents(state: FakeServerState, from: number): void {
  const url = state.options.webhookUrl;
  const fresh = state.ledger.events.slice(from);
  if (!url || fresh.length === 0) return;
  state.deliveries = state.deliveries.then(async (done) => {
    for (const event of fresh) {
      done.push(...(await deliverEvent(url, event, state.options.webhookSecret).catch((error: unknown) => [{ status: 0, body: String(error) }])));
    }
    return done;
  });
}

async function handleRequest(state: FakeServerState, request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const method = request.method ?? 'GET';
  const url = new URL(request.url ?? '/', 'http://fake-stripe');
  const body = await readBody(request);
  const idempotencyKey = headerValue(request, 'idempotency-key');
  const stripeVersion = headerValue(request, 'stripe-version');
  const requestId = newStripeId('req');
  if (method === 'OPTIONS') {
    response.writeHead(204, CORS_HEADERS).end();
    return;
  }
  if (method === 'GET' && (url.pathname === '/v3' || url.pathname === '/v3/')) {
    response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' }).end(fakeStripeJs(state.baseUrl));
    return;
  }
  const key = presentedKey(request.headers.authorization);
  const publishable = state.options.publishableKey !== undefined && key === state.options.publishableKey;
  const authenticated = key === state.options.secretKey || publishable;
  const entry: FakeStripeRequest = { method, path: url.pathname, params: {}, idempotencyKey, stripeVersion, authenticated, status: 0, replayed: false };
  state.requests.push(entry);

  const send = (status: number, json: string, extraHeaders: Record<string, string> = {}) => {
    entry.status = status;
    response.writeHead(status, {
      'content-type': 'application/json',
      'request-id': requestId,
      'stripe-version': stripeVersion ?? FAKE_STRIPE_API_VERSION,
      ...CORS_HEADERS,
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      ...extraHeaders,
    });
    response.end(json);
  };
  const sendAnswer = (answer: StripeAnswer) => send(answer.status, JSON.stringify(answer.body));

  if (!authenticated) return sendAnswer(authenticationFailure(key));
  try {
    entry.params = decodeStripeForm(method === 'GET' ? url.search : body);
  } catch (error) {
    if (error instanceof FormDecodeError) return sendAnswer(errorAnswer(400, { type: 'invalid_request_error', message: error.message, param: error.param }));
    throw error;
  }

  // Stripe keys idempotency on POST only; GET and DELETE are idempotent by definition.
  const idempotent = method === 'POST' && idempotencyKey !== null;
  const fingerprint = canonicalParams(entry.params);
  const saved = idempotent ? state.savedResults.get(idempotencyKey) : undefined;
  if (saved && idempotencyKey) {
    if (saved.method !== method || saved.path !== url.pathname || saved.fingerprint !== fingerprint) return sendAnswer(idempotencyConflict(idempotencyKey));
    entry.replayed = true;
    return send(saved.status, saved.body, { 'idempotent-replayed': 'true' });
  }
  const context: FakeRequestContext = { apiVersion: stripeVersion ?? FAKE_STRIPE_API_VERSION, requestId, idempotencyKey, baseUrl: state.baseUrl };
  const eventsBefore = state.ledger.events.length;
  const answer = publishable
    ? answerFor(state.ledger, method, url.pathname, entry.params, context, (...args) => publishableAnswer(state, ...args))
    : answerFor(state.ledger, method, url.pathname, entry.params, context);
  deliverNewEvents(state, eventsBefore);
  const json = JSON.stringify(answer.body);
  if (idempotent && answer.savedForIdempotency) {
    state.savedResults.set(idempotencyKey, { method, path: url.pathname, fingerprint, status: answer.status, body: json });
  }
  send(answer.status, json);
}

export async function startFakeStripe(options: FakeStripeOptions): Promise<FakeStripe> {
  const state: FakeServerState = {
    options,
    ledger: { paymentIntents: new Map(), customers: new Map(), events: [] },
    savedResults: new Map(),
    requests: [],
    baseUrl: '',
    deliveries: Promise.resolve([]),
  };
  const { ledger } = state;

  const server = http.createServer((request, response) => {
    handleRequest(state, request, response).catch((error: unknown) => {
      if (response.headersSent) return response.destroy();
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { type: 'api_error', message: `fake Stripe failed: ${String(error)}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.baseUrl = baseUrl;

  return {
    baseUrl,
    requests: state.requests,
    paymentIntents: () => [...ledger.paymentIntents.values()].map((intent) => structuredClone(intent)),
    events: () => ledger.events.map((event) => structuredClone(event)),
    delivered: () => state.deliveries.then((done) => [...done]),
    deliver: (url, event, deliverOptions) => deliverEvent(url, event, options.webhookSecret, deliverOptions),
    completeCustomerAction: (paymentIntentId, outcome) => {
      const from = ledger.events.length;
      const event = completeCustomerAction(ledger, paymentIntentId, outcome, { apiVersion: FAKE_STRIPE_API_VERSION, requestId: null, idempotencyKey: null, baseUrl });
      deliverNewEvents(state, from);
      return structuredClone(event);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type { DeliverOptions, Delivery } from './webhooks.ts';
export { FAKE_STRIPE_JS_CARDS } from './js.ts';
export { stripeSignatureHeader } from './webhooks.ts';
export type { FakeCustomer, FakePaymentIntent, FakeStripeEvent } from './objects.ts';
export { FAKE_TEST_PAYMENT_METHODS } from './payment-intents.ts';
