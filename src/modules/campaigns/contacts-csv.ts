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
  | { ok: false; status: 413 | 422; message: string };

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

export async function parseContactsCsv(bytes: Uint8Array, defaultCountry: string | null): Promise<ParsedUpload> {
  if (bytes.length > MAX_UPLOAD_BYTES) return { ok: false, status: 413, message: `the file is larger than ${MAX_UPLOAD_BYTES} bytes` };
  const head = Buffer.from(bytes.subarray(0, 64 * 1024)).toString('utf8').replace(/^\uFEFF/, '');
  const rejected: Array<{ row: number; reason: string }> = [];
  const parser = parse({
    bom: true,
    delimiter: detectDelimiter(head),
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_skip: (err: CsvError | undefined) => {
      rejected.push({ row: Number(err?.lines ?? 0), reason: `malformed CSV: ${err?.message ?? 'unreadable'}`.slice(0, 300) });
      return undefined;
    },
  });
  Readable.from(chunksOf(bytes)).pipe(parser);

  let header: string[] | null = null;
  let phoneAt = -1;
  let zoneAt = -1;
  let variableAt: Array<[number, string]> = [];
  const contacts: ParsedContact[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  let dataRows = 0;
  const country = (defaultCountry ?? undefined) as CountryCode | undefined;

  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
    const fields = record.map((f) => f.trim());
    if (fields.every((f) => f === '')) continue;
    if (!header) {
      header = fields;
      const lower = header.map((h) => h.toLowerCase());
      if (new Set(lower.filter((h) => h !== '')).size !== lower.filter((h) => h !== '').length) return { ok: false, status: 422, message: 'the header names a column twice' };
      phoneAt = PHONE_COLUMNS.map((name) => lower.indexOf(name)).find((i) => i >= 0) ?? -1;
      if (phoneAt < 0) return { ok: false, status: 422, message: 'the header has no phone column (phone, phone_number, number or to)' };
      zoneAt = lower.indexOf('timezone');
      variableAt = header.map((name, i) => [i, name] as [number, string]).filter(([i, name]) => i !== phoneAt && i !== zoneAt && name !== '');
      if (variableAt.length > MAX_VARIABLES) return { ok: false, status: 422, message: `at most ${MAX_VARIABLES} variable columns` };
      if (variableAt.some(([, name]) => name.length > 100)) return { ok: false, status: 422, message: 'a column name is longer than 100 characters' };
      continue;
    }
    dataRows += 1;
    if (dataRows > MAX_DATA_ROWS) return { ok: false, status: 413, message: `more than ${MAX_DATA_ROWS} data rows` };
    const row = info.lines;
    if (fields.length > header.length) {
      rejected.push({ row, reason: `${fields.length} fields, the header has ${header.length}` });
      continue;
    }
    const raw = fields[phoneAt] ?? '';
    if (raw === '') {
      rejected.push({ row, reason: 'no phone number' });
      continue;
    }
    const phone = toE164(raw, country);
    if (!phone) {
      rejected.push({ row, reason: `not a possible phone number: ${raw.slice(0, 40)}` });
      continue;
    }
    const zone = zoneAt >= 0 && fields[zoneAt] ? fields[zoneAt] : null;
    if (zone !== null && !isTimeZone(zone)) {
      rejected.push({ row, reason: `unknown time zone: ${zone.slice(0, 64)}` });
      continue;
    }
    if (variableAt.some(([i]) => (fields[i] ?? '').length > MAX_VALUE_LENGTH)) {
      rejected.push({ row, reason: `a value is longer than ${MAX_VALUE_LENGTH} characters` });
      continue;
    }
    if (seen.has(phone)) {
      duplicates += 1;
      continue;
    }
    seen.add(phone);
    const variables: Record<string, string> = {};
    for (const [i, name] of variableAt) variables[name] = (fields[i] ?? '').replaceAll('\u0000', '');
    contacts.push({ row, phone, variables, timezone: zone });
  }
  if (!header) return { ok: false, status: 422, message: 'the file has no header row' };
  rejected.sort((a, b) => a.row - b.row);
  return { ok: true, contacts, rejected, duplicates, variableNames: variableAt.map(([, name]) => name) };
}
