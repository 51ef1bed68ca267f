import { crc32 } from 'node:zlib';
import { randomBase62, sha256Hex, toBase62 } from '../secrets.ts';

// API keys: `sk_` + 40 base62 chars + 6-char base62 CRC32 of those 40 chars.
// The checksum lets a malformed or mistyped key be refused before any database lookup.

const BODY = 40;
const CHECK = 6;
const KEY_PATTERN = /^sk_([0-9A-Za-z]{40})([0-9A-Za-z]{6})$/;

function checksum(body: string): string {
  return toBase62(crc32(body), CHECK);
}

export function generateApiKey(): { key: string; hash: string; prefix: string; last4: string } {
  const body = randomBase62(BODY);
  const key = `sk_${body}${checksum(body)}`;
  return { key, hash: sha256Hex(key), prefix: key.slice(0, 7), last4: key.slice(-4) };
}

export function isWellFormedApiKey(key: string): boolean {
  const match = KEY_PATTERN.exec(key);
  return match !== null && checksum(match[1]) === match[2];
}

export const looksLikeApiKey = (token: string) => token.startsWith('sk_');
