import { monotonicFactory } from 'ulidx';

// `<prefix>_<26-char ULID>`: time-sortable, so ordering by id is ordering by creation.
export const ID_PREFIXES = [
  'usr', 'ws', 'key', 'agent', 'call', 'kb', 'src', 'chk', 'pn', 'wdg', 'conv', 'cmp', 'cnt', 'sch',
  'vs', 'pay', 'txn', 'evt', 'dlv', 'att', 'aud', 'inv', 'ses',
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

const nextUlid = monotonicFactory();

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

/** Pattern for a path parameter holding an id of this prefix (documents the shape in OpenAPI). */
export function idPattern(prefix: IdPrefix): string {
  return `^${prefix}_[0-9a-z]{26}$`;
}
