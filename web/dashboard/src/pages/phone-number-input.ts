// Phone numbers as people type them, checked before they reach the platform: the E.164 form
// (`+` then 7 to 15 digits, no leading zero in the country code) of a number written with the
// usual punctuation, and the lines of a pasted or uploaded list (the do-not-call import). The
// platform still has the last word (libphonenumber's isPossible()); this only catches what cannot
// be a number at all. Plain functions: unit-tested on Node (test/dashboard/knowledge-logic.test.ts).

export const E164_EXAMPLE = '+15550100222';

const PUNCTUATION = /[\s().\-\u00a0]/g;
const E164 = /^\+[1-9]\d{6,14}$/;

/** The E.164 form of `raw` ("+1 (555) 010-0222" → "+15550100222", "00 44 …" → "+44…"), or undefined. */
export function toE164(raw: string): string | undefined {
  let compact = raw.trim().replace(PUNCTUATION, '');
  if (compact.startsWith('00')) compact = `+${compact.slice(2)}`;
  return E164.test(compact) ? compact : undefined;
}

/** Why `raw` is not an E.164 number, in words; undefined when it is one. */
export function e164Problem(raw: string): string | undefined {
  const compact = raw.trim().replace(PUNCTUATION, '');
  if (compact === '') return 'Enter a phone number.';
  if (toE164(raw)) return undefined;
  if (!compact.startsWith('+') && !compact.startsWith('00')) return `Start with + and the country code, e.g. ${E164_EXAMPLE}.`;
  if (/[^\d+]/.test(compact)) return 'Use digits only after the +.';
  return `Not a phone number: + then 7 to 15 digits, e.g. ${E164_EXAMPLE}.`;
}

export interface ListedNumber {
  number: string;
  reason?: string;
}

export interface NumberList {
  /** Each number once, in the order first seen, with the reason of its first line. */
  entries: ListedNumber[];
  /** Lines that hold no phone number (1-based line numbers). */
  invalid: { line: number; text: string }[];
  /** Lines repeating a number already seen. */
  repeated: number;
}

const unquote = (cell: string) => cell.trim().replace(/^"(.*)"$/, '$1').replaceAll('""', '"').trim();

/**
 * The numbers of a pasted list or a CSV file: one a line, optionally followed by a reason after a
 * comma, semicolon or tab. Blank lines are skipped, and so is a first line without any digit (a
 * header such as `number,reason`).
 */
export function parseNumberList(text: string): NumberList {
  const list: NumberList = { entries: [], invalid: [], repeated: 0 };
  const seen = new Set<string>();
  const lines = text.split(/\r\n|\r|\n/);
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    if (index === 0 && !/\d/.test(line)) return;
    const [first, ...rest] = line.split(/[,;\t]/);
    const number = toE164(unquote(first));
    if (!number) {
      list.invalid.push({ line: index + 1, text: line.trim().slice(0, 80) });
      return;
    }
    if (seen.has(number)) {
      list.repeated++;
      return;
    }
    seen.add(number);
    const reason = unquote(rest.join(','));
    list.entries.push(reason ? { number, reason: reason.slice(0, 500) } : { number });
  });
  return list;
}
