import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulidx';

// `<prefix>_<26-char ULID>`: time-sortable, so ordering by id is ordering by creation.
export const ID_PREFIXES = [
  'usr', 'ws', 'key', 'agent', 'call', 'kb', 'src', 'chk', 'pn', 'wdg', 'conv', 'cmp', 'cnt', 'sch',
  'vs', 'pay', 'txn', 'evt', 'dlv', 'att', 'aud', 'inv', 'ses',
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

// ulidx asks its random source once per character (16 per id); the default source is a call into
// OpenSSL each time, which reads the process id (a system call) to detect a fork. The same
// cryptographic randomness, drawn 4 KiB at a time.
const pool = new Uint32Array(1024);
let next = pool.length;
function pooledRandom(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++] / 2 ** 32;
}

const nextUlid = monotonicFactory(pooledRandom);

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

/** Pattern for a path parameter holding an id of this prefix (documents the shape in OpenAPI). */
export function idPattern(prefix: IdPrefix): string {
  return `^${prefix}_[0-9a-z]{26}$`;
}
