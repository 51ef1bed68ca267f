// What the SDK needs from its host, found at run time so one build runs on Node ≥ 18, Deno, Bun
// and browsers: Web Crypto, random ids, base64. No Node module is imported statically.

interface SubtleLike {
  importKey(format: 'raw', key: Uint8Array, algorithm: { name: 'HMAC'; hash: 'SHA-256' }, extractable: false, usages: ['sign']): Promise<unknown>;
  sign(algorithm: 'HMAC', key: unknown, data: Uint8Array): Promise<ArrayBuffer>;
}
interface CryptoLike {
  subtle: SubtleLike;
  getRandomValues<T extends Uint8Array>(array: T): T;
  randomUUID?(): string;
}

let webCrypto: Promise<CryptoLike> | undefined;

/** Web Crypto: the global one, or node:crypto's on Node 18 where it is not global. */
export function crypto(): Promise<CryptoLike> {
  const global = (globalThis as { crypto?: CryptoLike }).crypto;
  if (global?.subtle) return Promise.resolve(global);
  const specifier = 'node:crypto';
  webCrypto ??= import(/* webpackIgnore: true */ specifier).then((m: { webcrypto: CryptoLike }) => m.webcrypto);
  return webCrypto;
}

/** A random UUID v4 (the Idempotency-Key of a logical request). */
export function uuid(): string {
  const global = (globalThis as { crypto?: CryptoLike }).crypto;
  if (global?.randomUUID) return global.randomUUID();
  const bytes = new Uint8Array(16);
  if (global?.getRandomValues) global.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export async function hmacSha256(key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const { subtle } = await crypto();
  const handle = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle.sign('HMAC', handle, data));
}

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function toHex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Compares two strings in time that depends only on their length. */
export function timingSafeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** True outside browsers (where a User-Agent header may be set). */
export function isServerRuntime(): boolean {
  return typeof (globalThis as { window?: unknown }).window === 'undefined';
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
