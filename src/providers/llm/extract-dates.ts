// Dates and times in user utterances for the built-in LLM's extraction (extract.ts): absolute
// ("March 4th", "4/3/2026"), relative ("tomorrow", "next Friday") as ISO calendar dates, and clock
// times ("half past three", "3 pm") as HH:MM.
import { normalise, ordinalWord, wordsToDigits } from '../../platform/text.ts';
import type { ExtractContext } from './extract.ts';

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
export const MONTH_RE = '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const DAY_RE = '(\\d{1,2})(?:st|nd|rd|th)?';

function monthIndex(word: string): number {
  return MONTHS.findIndex((m) => m.startsWith(word.toLowerCase().slice(0, 3)));
}

function iso(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function utcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

function addDays(date: Date, days: number): Date {
  return new Date(date.getTime() + days * 86_400_000);
}

function makeDate(year: number, month: number, day: number): Date | null {
  const d = new Date(Date.UTC(year, month, day));
  return d.getUTCMonth() === month && d.getUTCDate() === day ? d : null;
}

/** A month and day without a year: the next such date from today (today included). */
function upcoming(today: Date, month: number, day: number, year?: number): Date | null {
  if (year !== undefined) return makeDate(year < 100 ? 2000 + year : year, month, day);
  const thisYear = makeDate(today.getUTCFullYear(), month, day);
  if (thisYear && thisYear.getTime() >= today.getTime()) return thisYear;
  return makeDate(today.getUTCFullYear() + 1, month, day);
}

/** Replaces ordinal words ("third", "twenty-first") with "3rd"-style ordinals. */
function ordinalsToDigits(text: string): string {
  return text.replace(/\b(?:(twenty|thirty)[\s-])?([a-z]+)\b/gi, (whole, tens: string | undefined, word: string) => {
    const unit = ordinalWord(word.toLowerCase());
    if (unit === undefined) return whole;
    const base = tens === undefined ? 0 : tens.toLowerCase() === 'twenty' ? 20 : 30;
    return `${base + unit}th`;
  });
}

export function findDate(text: string, ctx: ExtractContext): string | null {
  const today = utcDay(ctx.now);
  const t = wordsToDigits(ordinalsToDigits(normalise(text)));
  let m = /\b(\d{4})-(\d{1,2})-(\d{1,2})\b/.exec(t);
  if (m) {
    const d = makeDate(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    if (d) return iso(d);
  }
  if (/\bday after tomorrow\b/.test(t)) return iso(addDays(today, 2));
  if (/\btomorrow\b/.test(t)) return iso(addDays(today, 1));
  if (/\b(today|tonight|this (morning|afternoon|evening))\b/.test(t)) return iso(today);
  if (/\byesterday\b/.test(t)) return iso(addDays(today, -1));
  m = /\bin (\d{1,3}) (day|week)s?\b/.exec(t);
  if (m) return iso(addDays(today, Number(m[1]) * (m[2] === 'week' ? 7 : 1)));
  if (/\bnext week\b/.test(t) && !new RegExp(`\\b(${WEEKDAYS.join('|')})\\b`).test(t)) return iso(addDays(today, 7));
  m = new RegExp(`\\b${MONTH_RE}\\.?\\s+(?:the\\s+)?${DAY_RE}\\b(?:,?\\s+(\\d{4}))?`).exec(t);
  if (m) {
    const d = upcoming(today, monthIndex(m[1]), Number(m[2]), m[3] ? Number(m[3]) : undefined);
    if (d) return iso(d);
  }
  m = new RegExp(`\\b(?:the\\s+)?${DAY_RE}\\s+(?:of\\s+)?${MONTH_RE}\\b(?:,?\\s+(\\d{4}))?`).exec(t);
  if (m) {
    const d = upcoming(today, monthIndex(m[2]), Number(m[1]), m[3] ? Number(m[3]) : undefined);
    if (d) return iso(d);
  }
  m = /\b(\d{1,2})\/(\d{1,2})(?:\/(\d{2}|\d{4}))?\b/.exec(t);
  if (m) {
    const [a, b] = [Number(m[1]), Number(m[2])];
    const [month, day] = ctx.dayFirst ? [b, a] : [a, b];
    const d = upcoming(today, month - 1, day, m[3] ? Number(m[3]) : undefined);
    if (d) return iso(d);
  }
  m = new RegExp(`\\b(?:(next|this|coming)\\s+)?(${WEEKDAYS.join('|')})\\b`).exec(t);
  if (m) {
    const target = WEEKDAYS.indexOf(m[2]);
    let delta = (target - today.getUTCDay() + 7) % 7;
    if (delta === 0) delta = 7;
    return iso(addDays(today, delta));
  }
  // "the 15th" alone: this month if still ahead, else next month.
  m = /\bthe (\d{1,2})(?:st|nd|rd|th)\b/.exec(t);
  if (m) {
    const day = Number(m[1]);
    const thisMonth = makeDate(today.getUTCFullYear(), today.getUTCMonth(), day);
    if (thisMonth && thisMonth.getTime() >= today.getTime()) return iso(thisMonth);
    const next = makeDate(today.getUTCFullYear(), today.getUTCMonth() + 1, day) ??
      makeDate(today.getUTCFullYear() + 1, 0, day);
    if (next) return iso(next);
  }
  return null;
}

/** A time of day as HH:MM (24 h). */
export function findTime(text: string): string | null {
  const t = wordsToDigits(normalise(text));
  if (/\bnoon\b|\bmidday\b/.test(t)) return '12:00';
  if (/\bmidnight\b/.test(t)) return '00:00';
  let m = /\b(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)(?=\W|$)/.exec(t) ?? /\b(\d{1,2})(?::(\d{2}))?\s*(in the morning|in the afternoon|in the evening|at night)\b/.exec(t);
  if (m) {
    let hour = Number(m[1]) % 12;
    if (/^p|afternoon|evening|night/.test(m[3])) hour += 12;
    if (hour > 23) return null;
    return `${String(hour).padStart(2, '0')}:${m[2] ?? '00'}`;
  }
  m = /\b([01]?\d|2[0-3]):([0-5]\d)\b/.exec(t);
  if (m) return `${m[1].padStart(2, '0')}:${m[2]}`;
  m = /\b(?:at|around|about) (\d{1,2})(?: (30|15|45))?\b(?! ?(?:%|percent|dollars|people|days|weeks|years))/.exec(t);
  if (m) {
    let hour = Number(m[1]);
    if (hour > 12) return null;
    // Business hours: "at 3" means 15:00, "at 9" means 09:00.
    if (hour >= 1 && hour <= 7) hour += 12;
    return `${String(hour).padStart(2, '0')}:${m[2] ?? '00'}`;
  }
  return null;
}
