import { gunzipSync, gzipSync } from 'node:zlib';

// How a source's extracted text is kept (knowledge_sources.content, read back by a refresh). A
// long text is stored gzip-compressed (base64, behind a marker): compressing it in a worker
// thread beats PostgreSQL's own compression, which on PGlite runs on the main thread (about
// 35 ms for 900,000 characters, and linear in the size, for files of up to 20 MiB). Short
// texts stay as they are, and so does any value written before this format.

/** Texts at least this long are compressed. */
export const PACK_FROM_CHARS = 64 * 1024;
const MARKER = '\u0001gz64:';

export function packContent(text: string): string {
  if (text.length < PACK_FROM_CHARS) return text;
  return MARKER + gzipSync(text).toString('base64');
}

export function unpackContent(stored: string): string {
  if (!stored.startsWith(MARKER)) return stored;
  return gunzipSync(Buffer.from(stored.slice(MARKER.length), 'base64')).toString('utf8');
}
