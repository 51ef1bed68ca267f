import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

// Hashing and random material for tokens and keys. Secrets are stored only as their SHA-256.

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** An opaque URL-safe token with `bytes` of entropy, optionally prefixed (`rt_…`). */
export function randomToken(prefix = '', bytes = 32): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** Fixed-width base62 of a non-negative integer. */
export function toBase62(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
