import { randomBytes } from 'node:crypto';
import type { FormObject, FormValue } from './form.ts';

// The fake Stripe's objects (PaymentIntent, Customer, Event), its error bodies and its parameter
// readers, shaped like Stripe's v1 API (docs.stripe.com/api): only the fields our adapter and
// tests read are modelled, with Stripe's names and types.

/** The API version the fake renders events in when a request names none (Stripe-Version header). */
export const FAKE_STRIPE_API_VERSION = '2026-10-28.endive';

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `pi_…`, `evt_…`, `cus_…`, `ch_…`, `req_…`: Stripe's prefix and 24 alphanumerics. */
export function newStripeId(prefix: string): string {
  const bytes = randomBytes(24);
  let suffix = '';
  for (const byte of bytes) suffix += ID_ALPHABET[byte % ID_ALPHABET.length];
  return `${prefix}_${suffix}`;
}

export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

export type PaymentIntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'requires_capture'
  | 'canceled'
  | 'succeeded';

export interface FakeLastPaymentError {
  type: 'card_error';
  code: string;
  decline_code?: string;
  message: string;
  doc_url: string;
  charge?: string;
  payment_method: { id: string; object: 'payment_method'; type: 'card' };
}

export type FakeNextAction =
  | { type: 'redirect_to_url'; redirect_to_url: { url: string; return_url: string } }
  | { type: 'use_stripe_sdk'; use_stripe_sdk: { type: 'three_d_secure_redirect'; stripe_js: string } };

export interface FakePaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_capturable: number;
  amount_received: number;
  automatic_payment_methods: { enabled: boolean; allow_redirects?: 'always' | 'never' } | null;
  canceled_at: number | null;
  cancellation_reason: string | null;
  capture_method: 'automatic_async';
  client_secret: string;
  confirmation_method: 'automatic';
  created: number;
  currency: string;
  customer: string | null;
  description: string | null;
  last_payment_error: FakeLastPaymentError | null;
  latest_charge: string | null;
  livemode: false;
  metadata: Record<string, string>;
  next_action: FakeNextAction | null;
  payment_method: string | null;
  payment_method_types: string[];
  setup_future_usage: string | null;
  status: PaymentIntentStatus;
}

export interface FakeCustomer {
  id: string;
  object: 'customer';
  created: number;
  email: string | null;
  name: string | null;
  description: string | null;
  metadata: Record<string, string>;
  livemode: false;
}

export interface FakeStripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: FakePaymentIntent };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

/** Stripe's error body: `{ error: { type, code, message, … } }`. */
export interface StripeErrorBody {
  type: 'invalid_request_error' | 'card_error' | 'idempotency_error' | 'api_error';
  message: string;
  code?: string;
  param?: string;
  decline_code?: string;
  doc_url?: string;
  charge?: string;
  payment_intent?: FakePaymentIntent;
  payment_method?: FakeLastPaymentError['payment_method'];
}

/** What a route answers. */
export interface StripeAnswer {
  status: number;
  body: unknown;
  /**
   * Stripe saves an idempotent result only once the endpoint began executing: a request rejected
   * while its parameters were validated is not saved, so a corrected retry with the key runs.
   */
  savedForIdempotency: boolean;
}

export function errorAnswer(status: number, error: StripeErrorBody, savedForIdempotency = false): StripeAnswer {
  return { status, body: { error }, savedForIdempotency };
}

/** A parameter Stripe would reject with a 400 invalid_request_error naming it. */
export class ParamError extends Error {
  constructor(
    message: string,
    readonly param: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export function paramErrorAnswer(error: ParamError): StripeAnswer {
  return errorAnswer(400, { type: 'invalid_request_error', message: error.message, param: error.param, ...(error.code ? { code: error.code } : {}) });
}

function leaf(params: FormObject, name: string): string | undefined {
  const value: FormValue | undefined = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ParamError(`Invalid string: ${name} must be a string`, name);
  return value;
}

export function readString(params: FormObject, name: string): string | undefined {
  const value = leaf(params, name);
  return value === '' ? undefined : value;
}

export function readRequiredString(params: FormObject, name: string): string {
  const value = readString(params, name);
  if (value === undefined) throw new ParamError(`Missing required param: ${name}.`, name, 'parameter_missing');
  return value;
}

export function readInteger(params: FormObject, name: string): number | undefined {
  const value = leaf(params, name);
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) throw new ParamError(`Invalid integer: ${value}`, name);
  return Number(value);
}

export function readBoolean(params: FormObject, name: string): boolean | undefined {
  const value = leaf(params, name);
  if (value === undefined || value === '') return undefined;
  if (value !== 'true' && value !== 'false') throw new ParamError(`Invalid boolean: ${value}`, name);
  return value === 'true';
}

export function readObject(params: FormObject, name: string): FormObject | undefined {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string' || Array.isArray(value)) throw new ParamError(`Invalid hash: ${name} must be a hash`, name);
  return value;
}

/** Stripe metadata: a hash of string values (at most 50 keys). */
export function readMetadata(params: FormObject): Record<string, string> {
  const metadata = readObject(params, 'metadata') ?? {};
  const entries = Object.entries(metadata);
  if (entries.length > 50) throw new ParamError('Invalid metadata: at most 50 keys are allowed.', 'metadata');
  const result: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (typeof value !== 'string') throw new ParamError(`Invalid metadata: metadata[${key}] must be a string`, `metadata[${key}]`);
    result[key] = value;
  }
  return result;
}
