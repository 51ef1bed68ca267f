import { invalidField } from './errors.ts';

// Cursor pagination, newest first. Ids are time-sortable, so a page is `id < cursor ORDER BY id DESC`
// and the cursor is the last id of the previous page, wrapped so clients treat it as opaque.

export const DEFAULT_LIMIT = 20;

export interface PageRequest {
  limit: number;
  /** Return rows whose sort key is strictly below this one. */
  after?: string;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export function encodeCursor(key: string): string {
  return Buffer.from(`v1:${key}`).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const decoded = Buffer.from(cursor, 'base64url').toString();
  if (!decoded.startsWith('v1:') || decoded.length < 4) throw invalidField('query.cursor', 'is not a cursor returned by this list');
  return decoded.slice(3);
}

export function pageRequest(query: { limit?: number; cursor?: string }): PageRequest {
  return { limit: query.limit ?? DEFAULT_LIMIT, after: decodeCursor(query.cursor) };
}

/** Repos fetch `limit + 1` rows; this trims the extra row and derives has_more and next_cursor. */
export function toPage<R, T>(rows: R[], request: PageRequest, keyOf: (row: R) => string, present: (row: R) => T): Page<T> {
  const hasMore = rows.length > request.limit;
  const kept = hasMore ? rows.slice(0, request.limit) : rows;
  return {
    data: kept.map(present),
    has_more: hasMore,
    next_cursor: hasMore && kept.length > 0 ? encodeCursor(keyOf(kept[kept.length - 1])) : null,
  };
}
