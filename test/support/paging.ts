import assert from 'node:assert/strict';
import type { TestApp } from './app.ts';

type IdPage = { data: { id: string }[]; has_more: boolean; next_cursor: string | null };

/**
 * Reads a list page after page, each from the previous one's cursor (`null` for the first), and
 * answers each page's ids, stopping after `maxPages` should a cursor never end. Checks that a page
 * has more exactly when it gives a cursor (a failure names the page by `label`, the URL over HTTP).
 */
export async function idsOfPages(readPage: (cursor: string | null) => Promise<IdPage>, maxPages = 10, label = 'page'): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const page = await readPage(cursor);
    pages.push(page.data.map((item) => item.id));
    assert.equal(page.has_more, page.next_cursor !== null, `${label} ${pages.length}: has_more ${page.has_more}, next_cursor ${page.next_cursor}`);
    cursor = page.next_cursor;
  } while (cursor && pages.length < maxPages);
  return pages;
}

/** idsOfPages over HTTP: `url` read `limit` items at a time. */
export function idsByPage(app: TestApp, auth: { token?: string; workspaceId?: string }, url: string, limit: number, maxPages = 10): Promise<string[][]> {
  return idsOfPages(async (cursor) => {
    const pageUrl = `${url}${url.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
    return (await app.request({ method: 'GET', url: pageUrl, ...auth })).json();
  }, maxPages, `GET ${url} page`);
}
