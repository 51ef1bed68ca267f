import { createHmac, randomBytes } from 'node:crypto';

// Webhook secrets and signatures. Two signatures per delivery, so a receiver can use either:
// - `X-Service-Signature: sha256=<hex>`: HMAC-SHA256 of the raw body keyed with the whole
//   `whsec_…` string, as the spec's reader would implement it;
// - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`):
//   HMAC-SHA256 of `${id}.${timestamp}.${body}` keyed with the base64-decoded bytes after
//   `whsec_`, so the `standardwebhooks` libraries verify it. After a rotation the old secret
//   signs beside the new one (space-separated `v1,…` entries) for 24 h.

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

export function serviceSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

export function standardSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', standardKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

export interface SignInput {
  /** `webhook-id`: the event id, stable across retries and replays. */
  id: string;
  body: string;
  at: Date;
  /** The current secret. */
  secret: string;
  /** Secrets still valid after a rotation; they add `webhook-signature` entries only. */
  previousSecrets?: string[];
  userAgent: string;
}

/** Every header of a delivery attempt. */
export function signedHeaders(input: SignInput): Record<string, string> {
  const ts = Math.floor(input.at.getTime() / 1000);
  const signatures = [input.secret, ...(input.previousSecrets ?? [])].map((s) => standardSignature(s, input.id, ts, input.body));
  return {
    'content-type': 'application/json',
    'user-agent': input.userAgent,
    'x-service-signature': serviceSignature(input.secret, input.body),
    'webhook-id': input.id,
    'webhook-timestamp': String(ts),
    'webhook-signature': signatures.join(' '),
  };
}
