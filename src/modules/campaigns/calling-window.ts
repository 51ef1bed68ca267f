import { type CallingWindow, WEEKDAYS, type Weekday } from './tables.ts';

// The calling window (DESIGN part 6, Campaigns): a contact is called only on the window's days,
// between start and end, in its own time zone (the upload's `timezone` column, else the window's).
// An end before the start wraps past midnight: the hours after midnight belong to the day the
// window opened (a Friday 22:00–02:00 window is open on Saturday at 01:00, not on Monday at 01:00).

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** True when `timeZone` is an IANA zone this runtime knows. */
export function isTimeZone(timeZone: string): boolean {
  if (timeZone.length === 0 || timeZone.length > 64) return false;
  try {
    formatterOf(timeZone);
    return true;
  } catch {
    return false;
  }
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** The weekday and minute of the day at `at` in `timeZone`. */
export function localTime(at: Date, timeZone: string): { day: Weekday; minute: number } {
  let day = 'sun';
  let hour = 0;
  let minute = 0;
  for (const part of formatterOf(timeZone).formatToParts(at)) {
    if (part.type === 'weekday') day = part.value.toLowerCase().slice(0, 3);
    else if (part.type === 'hour') hour = Number(part.value);
    else if (part.type === 'minute') minute = Number(part.value);
  }
  return { day: day as Weekday, minute: hour * 60 + minute };
}

/** Whether the window is open at `at` for a contact in `timeZone` (the window's own zone when null). */
export function isWindowOpen(window: CallingWindow, timeZone: string | null, at: Date): boolean {
  const { day, minute } = localTime(at, timeZone ?? window.timezone);
  const start = minutesOf(window.start);
  const end = minutesOf(window.end);
  const days = new Set(window.days);
  if (start < end) return days.has(day) && minute >= start && minute < end;
  const yesterday = WEEKDAYS[(WEEKDAYS.indexOf(day) + 6) % 7];
  return (days.has(day) && minute >= start) || (days.has(yesterday) && minute < end);
}
