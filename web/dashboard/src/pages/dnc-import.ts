import type { ListedNumber, NumberList } from './phone-number-input.ts';

// The do-not-call import. The API adds one number per request (POST /v1/dnc, no bulk endpoint),
// so a list is sent one number after the other: a refusal of one number is noted and the import
// goes on; a rate limit (429) is waited out (its Retry-After, else 5 s) rather than counted as a
// failure; a stop request ends it between two numbers. No DOM and no SDK here: unit-tested with a
// fake `add` (test/dashboard/knowledge-logic.test.ts).

/** At most this many numbers per import (the list is sent one request at a time). */
export const MAX_IMPORT = 1000;

export interface ImportOutcome {
  /** Numbers the platform answered for: added, or already on the list. */
  listed: number;
  refused: { number: string; message: string }[];
  /** True when stopped before the end. */
  stopped: boolean;
}

/** What a failed add says: wait and retry (a rate limit), or a refusal of this number. */
export type AddFailure = { retryAfterMs: number } | { message: string };

export interface ImportDeps {
  add(entry: ListedNumber): Promise<void>;
  /** Classifies an error thrown by `add`. */
  failureOf(error: unknown): AddFailure;
  sleep(ms: number): Promise<void>;
  onProgress?(done: number, total: number): void;
  stopped?(): boolean;
}

export async function importNumbers(entries: ListedNumber[], deps: ImportDeps): Promise<ImportOutcome> {
  const outcome: ImportOutcome = { listed: 0, refused: [], stopped: false };
  const batch = entries.slice(0, MAX_IMPORT);
  for (let index = 0; index < batch.length; ) {
    if (deps.stopped?.()) {
      outcome.stopped = true;
      break;
    }
    const entry = batch[index];
    try {
      await deps.add(entry);
      outcome.listed++;
    } catch (error) {
      const failure = deps.failureOf(error);
      if ('retryAfterMs' in failure) {
        await deps.sleep(failure.retryAfterMs);
        continue;
      }
      outcome.refused.push({ number: entry.number, message: failure.message });
    }
    index++;
    deps.onProgress?.(index, batch.length);
  }
  return outcome;
}

/** The Retry-After header (seconds) as milliseconds, 5 s when absent or unreadable, at most a minute. */
export function retryAfterMs(header: string | null | undefined): number {
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 60) * 1000 : 5000;
}

/** "3 numbers listed, 1 refused" and the like. */
export function importSummary(outcome: ImportOutcome, invalidLines: number): string {
  const parts = [`${outcome.listed} ${outcome.listed === 1 ? 'number' : 'numbers'} on the list`];
  if (outcome.refused.length > 0) parts.push(`${outcome.refused.length} refused`);
  if (invalidLines > 0) parts.push(`${invalidLines} ${invalidLines === 1 ? 'line' : 'lines'} without a phone number skipped`);
  return `${outcome.stopped ? 'Import stopped' : 'Import done'}: ${parts.join(', ')}.`;
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** What a parsed list holds, before it is sent: "3 numbers to import, 1 repeated, 1 line without a phone number." */
export function importPreview(list: NumberList): string {
  const parts = [`${plural(list.entries.length, 'number', 'numbers')} to import`];
  if (list.repeated > 0) parts.push(`${list.repeated} repeated`);
  if (list.invalid.length > 0) parts.push(`${plural(list.invalid.length, 'line', 'lines')} without a phone number`);
  return `${parts.join(', ')}.`;
}
