import { parse as parseCsv } from 'csv-parse/sync';
import { convert as htmlToText } from 'html-to-text';
import mammoth from 'mammoth';
import { extractText, getDocumentProxy } from 'unpdf';
import { AppError } from '../../platform/errors.ts';
import type { Format } from './formats.ts';

// How each document format (formats.ts) becomes plain text (paragraphs separated by blank lines,
// which the chunker respects). Loaded by the CPU pool's threads (ingest-worker.ts), not the API
// process: its libraries (pdf.js, mammoth, html-to-text) take long to load.

export { type Format, FORMATS, formatOfFile, formatOfResponse, SUPPORTED_FORMATS_TEXT } from './formats.ts';

function decodeText(bytes: Buffer, contentType?: string): string {
  const charset = /charset=([^;]+)/i.exec(contentType ?? '')?.[1]?.trim().replace(/"/g, '');
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

export function htmlToPlainText(html: string): string {
  return htmlToText(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'noscript', format: 'skip' },
      { selector: 'svg', format: 'skip' },
      { selector: 'nav', format: 'skip' },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'h4', options: { uppercase: false } },
      { selector: 'h5', options: { uppercase: false } },
      { selector: 'h6', options: { uppercase: false } },
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  });
}

/** Markdown to text: drops syntax that only adds noise to search (markers, link targets, fences). */
export function markdownToPlainText(md: string): string {
  return md
    .replace(/^```.*$/gm, '')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/^[ \t]{0,3}#{1,6}[ \t]+/gm, '')
    .replace(/^[ \t]{0,3}>[ \t]?/gm, '')
    .replace(/^[ \t]*(?:[-*+]|\d+[.)])[ \t]+/gm, '- ')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/^[ \t]*(?:-{3,}|\*{3,}|_{3,})[ \t]*$/gm, '')
    .replace(/^\|?(\s*:?-+:?\s*\|)+\s*:?-*:?\s*$/gm, '');
}

async function pdfToText(bytes: Buffer): Promise<string> {
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    // pdf.js gives one line per text line: a single line break is a wrap, not a paragraph.
    return text.map((page) => page.replace(/([^\n])\n(?!\n)/g, '$1 ')).join('\n\n');
  } finally {
    await pdf.destroy();
  }
}

function csvToText(csv: string): string {
  const rows = parseCsv(csv, { bom: true, skip_empty_lines: true, relax_column_count: true, trim: true }) as string[][];
  if (rows.length === 0) return '';
  const [header, ...body] = rows;
  if (body.length === 0) return header.join(', ');
  // One paragraph per row, each value named by its column, so a row reads as a sentence.
  return body.map((row) => row.map((value, i) => (value ? `${header[i] || `column ${i + 1}`}: ${value}` : '')).filter(Boolean).join('; ')).join('\n\n');
}

/** The <title> of an HTML document, if it has one in its first bytes. */
export function htmlTitle(bytes: Buffer): string | undefined {
  return /<title[^>]*>([^<]{1,300})<\/title>/i.exec(bytes.subarray(0, 64 * 1024).toString('utf8'))?.[1]?.replaceAll('\u0000', '').trim() || undefined;
}

/** Plain text of a document; throws a 422 naming `path` when the bytes are not a readable document of that format. */
export async function extractPlainText(bytes: Buffer, format: Format, path: string, contentType?: string): Promise<string> {
  try {
    switch (format) {
      case 'txt':
        return decodeText(bytes, contentType);
      case 'md':
        return markdownToPlainText(decodeText(bytes, contentType));
      case 'html':
        return htmlToPlainText(decodeText(bytes, contentType));
      case 'csv':
        return csvToText(decodeText(bytes, contentType));
      case 'pdf':
        return await pdfToText(bytes);
      case 'docx':
        return (await mammoth.extractRawText({ buffer: bytes })).value;
    }
  } catch {
    throw new AppError('validation_failed', `${path}: could not be read as ${format}`, { errors: [{ path, message: `could not be read as ${format}` }] });
  }
}
