import { chunkText } from './chunking.ts';
import { extractPlainText, type Format, htmlTitle } from './extract.ts';
import { packContent, unpackContent } from './stored-content.ts';

// The ingestion tasks run by the app's CPU pool (platform/cpu-pool.ts), each in a worker thread:
// text extraction (pdf.js, mammoth, html-to-text), chunking and packing the text for storage take
// seconds for a large document, which on the main thread would stall every other request. Thin
// wrappers over the pure functions of extract.ts, chunking.ts and stored-content.ts, which stay
// testable directly. Failures come back as values: an error thrown here reaches the caller as a
// plain Error, without its class.

/** A document's chunks, and its text as stored on the source (packContent). */
export interface PreparedText {
  chunks: string[];
  stored: string;
}

/**
 * Chunks of `text`, or of a source's stored content (a refresh). NUL characters, binary noise of
 * a document that PostgreSQL refuses in text, are dropped.
 */
export function prepareText(input: { text: string } | { stored: string }): PreparedText {
  if ('stored' in input) return { chunks: chunkText(unpackContent(input.stored)), stored: input.stored };
  const text = input.text.replaceAll('\u0000', '');
  return { chunks: chunkText(text), stored: packContent(text) };
}

export type ExtractedDocument = ({ readable: true; title?: string } & PreparedText) | { readable: false };

/** Chunks and stored text of a document (and an HTML page's title); `readable: false` when it is not a document of that format. */
export async function extractDocument(input: { bytes: Uint8Array; format: Format; contentType?: string }): Promise<ExtractedDocument> {
  // Structured clone delivers a Buffer as a plain Uint8Array.
  const bytes = Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength);
  let text: string;
  try {
    text = await extractPlainText(bytes, input.format, 'file', input.contentType);
  } catch {
    return { readable: false };
  }
  return { readable: true, ...prepareText({ text }), ...(input.format === 'html' ? { title: htmlTitle(bytes) } : {}) };
}
