import assert from 'node:assert/strict';
import type { TestApp } from './app.ts';

/**
 * Reads a list `limit` items at a time, each page from the previous one's cursor, and answers each
 * page's ids (stopping after `maxPages`, should a cursor never end). Checks that a page has more
 * exactly when it gives a cursor.
 */
export async function idsByPage(app: TestApp, auth: { token?: string; workspaceId?: string }, url: string, limit: number, maxPages = 10): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const pageUrl: string = `${url}${url.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
    const page: { data: { id: string }[]; has_more: boolean; next_cursor: string | null } = (await app.request({ method: 'GET', url: pageUrl, ...auth })).json();
    pages.push(page.data.map((item) => item.id));
    assert.equal(page.has_more, page.next_cursor !== null, pageUrl);
    cursor = page.next_cursor;
  } while (cursor && pages.length < maxPages);
  return pages;
}
