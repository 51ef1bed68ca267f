import { WebhookVerificationError } from './core/errors.js';
import { fromBase64, hmacSha256, timingSafeEqual, toBase64, toHex } from './core/runtime.js';

// Verifies the platform's webhook deliveries. Each carries two signatures (DESIGN part 6):
// - Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` (one
//   or more, space-separated: after a rotation the old secret signs too), HMAC-SHA256 of
//   `id.timestamp.body` keyed with the base64 bytes after `whsec_`; the timestamp must be within
//   the tolerance, which refuses replays of old deliveries.
// - `X-Service-Signature: sha256=<hex>`, HMAC-SHA256 of the raw body keyed with the whole secret
//   string. It signs no timestamp, so `webhook-timestamp` (when present) is still checked.
// Verify the raw body exactly as received: parsing and re-serialising JSON changes the bytes.

export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Seconds a delivery's timestamp may differ from now (default 300). */
  toleranceSeconds?: number;
  /** Which signature to check (default `auto`: Standard Webhooks when present, else X-Service-Signature). */
  scheme?: 'auto' | 'standard' | 'service';
  /** The current time (tests). */
  now?: Date;
}

const encoder = new TextEncoder();

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

function checkTimestamp(value: string | undefined, options: VerifyOptions, required: boolean): void {
  if (value === undefined) {
    if (required) throw new WebhookVerificationError('missing webhook-timestamp');
    return;
  }
  const seconds = Number(value);
  if (!Number.isInteger(seconds)) throw new WebhookVerificationError('invalid webhook-timestamp');
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - seconds) > (options.toleranceSeconds ?? 300)) throw new WebhookVerificationError('webhook-timestamp outside the tolerance');
}

async function verifyStandard(body: string, headers: HeaderSource, secret: string, options: VerifyOptions): Promise<void> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !signatures) throw new WebhookVerificationError('missing webhook-id or webhook-signature');
  checkTimestamp(timestamp, options, true);
  const key = fromBase64(secret.startsWith('whsec_') ? secret.slice(6) : secret);
  const expected = `v1,${toBase64(await hmacSha256(key, encoder.encode(`${id}.${timestamp}.${body}`)))}`;
  if (!signatures.split(' ').some((candidate) => timingSafeEqual(candidate, expected))) throw new WebhookVerificationError('no webhook-signature matches');
}

async function verifyService(body: string, headers: HeaderSource, secret: string, options: VerifyOptions): Promise<void> {
  const signature = header(headers, 'x-service-signature');
  if (!signature) throw new WebhookVerificationError('missing X-Service-Signature');
  checkTimestamp(header(headers, 'webhook-timestamp'), options, false);
  const expected = `sha256=${toHex(await hmacSha256(encoder.encode(secret), encoder.encode(body)))}`;
  if (!timingSafeEqual(signature, expected)) throw new WebhookVerificationError('X-Service-Signature does not match');
}

/**
 * Verifies a delivery and returns its parsed event; throws WebhookVerificationError otherwise.
 * `payload` is the raw body (string or bytes); `secret` the agent's or the tenant webhook's `whsec_…`.
 */
export async function verifyWebhook<T = unknown>(payload: string | Uint8Array, headers: HeaderSource, secret: string, options: VerifyOptions = {}): Promise<T> {
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  const scheme = options.scheme ?? 'auto';
  const standard = scheme === 'standard' || (scheme === 'auto' && header(headers, 'webhook-signature') !== undefined);
  if (standard) await verifyStandard(body, headers, secret, options);
  else await verifyService(body, headers, secret, options);
  try {
    return JSON.parse(body) as T;
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
}

