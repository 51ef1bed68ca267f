import { Type } from 'typebox';
import { invalidField } from '../errors.ts';
import { Timestamp } from './schemas.ts';

// `?from=&to=` on reports (analytics, usage): [from, to), default the last 30 days, at most 366.

const DAY_MS = 86_400_000;
const MAX_RANGE_DAYS = 366;

export const DateRangeQuery = (what: string) =>
  Type.Object(
    { from: Type.Optional(Timestamp), to: Type.Optional(Timestamp) },
    { additionalProperties: false, description: `${what} at or after \`from\` and before \`to\` (default: the last 30 days, at most ${MAX_RANGE_DAYS})` },
  );

export function dateRangeOf(query: { from?: string; to?: string }, now: Date): { from: Date; to: Date } {
  const to = query.to ? new Date(query.to) : now;
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - 30 * DAY_MS);
  if (from >= to) throw invalidField('query.from', 'must be before to');
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) throw invalidField('query.from', `the range is at most ${MAX_RANGE_DAYS} days`);
  return { from, to };
}

/** Every UTC day (YYYY-MM-DD) of [from, to). */
function daysOf(range: { from: Date; to: Date }): string[] {
  const days: string[] = [];
  for (let at = Date.UTC(range.from.getUTCFullYear(), range.from.getUTCMonth(), range.from.getUTCDate()); at < range.to.getTime(); at += DAY_MS) {
    days.push(new Date(at).toISOString().slice(0, 10));
  }
  return days;
}

/**
 * A report's series by UTC day: one entry for every day of the range, in order, made by `value`
 * from the day's row (rows carry their day as YYYY-MM-DD), or from undefined on a day without one.
 */
export function perDayOf<Row extends { day: string }, T>(range: { from: Date; to: Date }, rows: readonly Row[], value: (row: Row | undefined, date: string) => T): T[] {
  const byDay = new Map(rows.map((row) => [row.day, row]));
  return daysOf(range).map((date) => value(byDay.get(date), date));
}
