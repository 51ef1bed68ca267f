import { Readable } from 'node:stream';
import { type CsvError, parse } from 'csv-parse';
import type { CountryCode } from 'libphonenumber-js';
import { toE164 } from '../../platform/phone.ts';
import { isTimeZone } from './calling-window.ts';

// Reading a contact upload (DESIGN part 6, Campaigns). The bytes are streamed through csv-parse
// record by record: a UTF-8 BOM is dropped, the delimiter (`,`, `;` or a tab, as spreadsheet
// exports in many locales write) is detected on the header line, quoted fields, CRLF and empty
// lines are handled. The phone column is `phone|phone_number|number|to`, an optional `timezone`
// column gives a contact its own zone, every other column becomes a call variable. Each data row
// is accepted (E.164 through libphonenumber-js with the campaign's default country) or rejected
// with a reason; duplicates within the file are counted. Run in the CPU pool (csv-worker.ts).
// A quote inside a cell that is not a quoted cell's end (`5'10"`, `"Ann" Jr`) is read as it stands
// (`relax_quotes`): read strictly, such a quote would leave the parser inside a quoted cell that
// swallows the rows after it without a word. `row` is the line a record starts on.

export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
export const MAX_DATA_ROWS = 100_000;
export const MAX_VARIABLES = 50;
export const MAX_VALUE_LENGTH = 2000;
const PHONE_COLUMNS = ['phone', 'phone_number', 'number', 'to'];

export interface ParsedContact {
  row: number;
  phone: string;
  variables: Record<string, string>;
  timezone: string | null;
}

export type ParsedUpload =
  | { ok: true; contacts: ParsedContact[]; rejected: Array<{ row: number; reason: string }>; duplicates: number; variableNames: string[] }
  | Refusal;

/** The delimiter of the header line: the most frequent of `,`, `;` and tab outside quotes (`,` when none). */
export function detectDelimiter(text: string): string {
  const counts: Record<string, number> = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && ch in counts) counts[ch] += 1;
  }
  return Object.entries(counts).reduce((best, entry) => (entry[1] > best[1] ? entry : best), [',', 0])[0];
}

function chunksOf(bytes: Uint8Array, size = 64 * 1024): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  return chunks;
}

const CR = 0x0d;
const LF = 0x0a;

/**
 * The line numbers of record starts, counted over the file's bytes (csv-parse's own `lines` is the
 * record's last line, and counts a quoted CRLF twice). `lineAt(offset)` answers the line of the
 * first byte at or after `offset` that is not a line end (the blank lines before a record skipped):
 * offsets must not go down. `\r\n`, `\r` and `\n` each end a line.
 */
function lineCounter(bytes: Uint8Array) {
  let at = 0;
  let line = 1;
  return (offset: number): number => {
    while (at < bytes.length && (at < offset || bytes[at] === CR || bytes[at] === LF)) {
      if (bytes[at] === LF || (bytes[at] === CR && bytes[at + 1] !== LF)) line += 1;
      at += 1;
    }
    return line;
  };
}

/** Why a record csv-parse refused is rejected: its own words but for the quote never closed (its line count is its own). */
function malformedReason(err: CsvError): string {
  if (err.code === 'CSV_QUOTE_NOT_CLOSED') return 'malformed CSV: a quoted cell is never closed (the rest of the file would be its value)';
  return `malformed CSV: ${err.message}`.slice(0, 300);
}

type Refusal = { ok: false; status: 413 | 422; message: string };
const refused = (status: 413 | 422, message: string): Refusal => ({ ok: false, status, message });

interface Columns {
  width: number;
  phoneAt: number;
  zoneAt: number;
  variableAt: Array<[number, string]>;
}

/** The header's columns, or why the file is refused. */
function readHeader(header: string[]): Columns | Refusal {
  const lower = header.map((h) => h.toLowerCase());
  const named = lower.filter((h) => h !== '');
  if (new Set(named).size !== named.length) return refused(422, 'the header names a column twice');
  const phoneAt = PHONE_COLUMNS.map((name) => lower.indexOf(name)).find((i) => i >= 0) ?? -1;
  if (phoneAt < 0) return refused(422, 'the header has no phone column (phone, phone_number, number or to)');
  const zoneAt = lower.indexOf('timezone');
  const variableAt = header.map((name, i) => [i, name] as [number, string]).filter(([i, name]) => i !== phoneAt && i !== zoneAt && name !== '');
  if (variableAt.length > MAX_VARIABLES) return refused(422, `at most ${MAX_VARIABLES} variable columns`);
  if (variableAt.some(([, name]) => name.length > 100)) return refused(422, 'a column name is longer than 100 characters');
  return { width: header.length, phoneAt, zoneAt, variableAt };
}

/** A data row's phone and zone, or the reason it is rejected. */
function readRow(fields: string[], columns: Columns, country: CountryCode | undefined): { phone: string; zone: string | null } | { reason: string } {
  if (fields.length > columns.width) return { reason: `${fields.length} fields, the header has ${columns.width}` };
  const raw = fields[columns.phoneAt] ?? '';
  if (raw === '') return { reason: 'no phone number' };
  const phone = toE164(raw, country);
  if (!phone) return { reason: `not a possible phone number: ${raw.slice(0, 40)}` };
  const zone = columns.zoneAt >= 0 && fields[columns.zoneAt] ? fields[columns.zoneAt] : null;
  if (zone !== null && !isTimeZone(zone)) return { reason: `unknown time zone: ${zone.slice(0, 64)}` };
  if (columns.variableAt.some(([i]) => (fields[i] ?? '').length > MAX_VALUE_LENGTH)) return { reason: `a value is longer than ${MAX_VALUE_LENGTH} characters` };
  return { phone, zone };
}

export async function parseContactsCsv(bytes: Uint8Array, defaultCountry: string | null): Promise<ParsedUpload> {
  if (bytes.length > MAX_UPLOAD_BYTES) return refused(413, `the file is larger than ${MAX_UPLOAD_BYTES} bytes`);
  const head = Buffer.from(bytes.subarray(0, 64 * 1024)).toString('utf8').replace(/^\uFEFF/, '');
  const malformed: CsvError[] = [];
  const parser = parse({
    bom: true,
    delimiter: detectDelimiter(head),
    info: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_skip: (err: CsvError | undefined) => {
      if (err) malformed.push(err);
      return undefined;
    },
  });
  Readable.from(chunksOf(bytes)).pipe(parser);

  const lineAt = lineCounter(bytes);
  const rejected: Array<{ row: number; reason: string }> = [];
  const contacts: ParsedContact[] = [];
  const seen = new Set<string>();
  let columns: Columns | null = null;
  let duplicates = 0;
  let dataRows = 0;
  let endOfLast = 0;
  const country = (defaultCountry ?? undefined) as CountryCode | undefined;

  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { bytes: number } }>) {
    const recordStart = endOfLast;
    endOfLast = info.bytes;
    const fields = record.map((f) => f.trim());
    if (fields.every((f) => f === '')) continue;
    if (!columns) {
      const read = readHeader(fields);
      if (!('width' in read)) return read;
      columns = read;
      continue;
    }
    dataRows += 1;
    if (dataRows > MAX_DATA_ROWS) return refused(413, `more than ${MAX_DATA_ROWS} data rows`);
    const row = lineAt(recordStart);
    const read = readRow(fields, columns, country);
    if ('reason' in read) {
      rejected.push({ row, reason: read.reason });
      continue;
    }
    if (seen.has(read.phone)) {
      duplicates += 1;
      continue;
    }
    seen.add(read.phone);
    const variables: Record<string, string> = {};
    for (const [i, name] of columns.variableAt) variables[name] = (fields[i] ?? '').replaceAll('\u0000', '');
    contacts.push({ row, phone: read.phone, variables, timezone: read.zone });
  }
  if (!columns) return refused(422, 'the file has no header row');
  // With relaxed quotes the one record csv-parse can refuse is a quoted cell never closed, which
  // runs to the end of the file: it starts after the last record read, and is the last rejected.
  for (const err of malformed) rejected.push({ row: lineAt(endOfLast), reason: malformedReason(err) });
  return { ok: true, contacts, rejected, duplicates, variableNames: columns.variableAt.map(([, name]) => name) };
}
