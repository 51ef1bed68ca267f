import { stringify } from 'csv-stringify';

// The CSV writer of every export, with its cells made safe to open in a spreadsheet.
//
// A cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is read as a formula by
// Excel, LibreOffice and Google Sheets, and our exports carry text we did not write: contact
// fields of an upload, variables, what a caller said (`extracted.*`). OWASP's advice (CSV
// Injection) is a leading `'`, which spreadsheets show as text. Two kinds of value that begin
// with such a character are kept as they are because they cannot run anything and are read by
// people and scripts: a plain number (`-2`, `-0.5`) and an E.164 phone number (`+15551234567`).
// The fullwidth forms of the four characters are treated alike (some spreadsheets normalise them).

const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;
const E164 = /^\+[1-9]\d{1,14}$/;

/** The text of a cell as a spreadsheet should show it: a formula-like value gets a leading `'`. */
export function neutraliseFormula(text: string): string {
  if (!FORMULA_START.test(text) || PLAIN_NUMBER.test(text) || E164.test(text)) return text;
  return `'${text}`;
}

/** A csv-stringify stream with a header row; every string cell (the header's too) is neutralised. */
export function csvStream(columns: string[]) {
  return stringify({ header: true, columns, cast: { string: neutraliseFormula } });
}
