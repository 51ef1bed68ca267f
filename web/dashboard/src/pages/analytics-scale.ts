import type { CallAnalytics, CallSeries } from '../../../../sdks/typescript/src/index.ts';

// The analytics page's arithmetic: the date range asked for, the chart's scale and bars, and how
// the figures read. The series is by UTC day, so a range of N days starts at a UTC midnight.

const DAY_MS = 86_400_000;

export const RANGE_CHOICES = [7, 30, 90] as const;

/**
 * The last `days` UTC days, today included: from midnight `days - 1` days ago; `to` is left to
 * the API (now), so the same range asked again later includes the calls made since.
 */
export function rangeOfDays(days: number, now: Date): { from: string } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return { from: new Date(today - (days - 1) * DAY_MS).toISOString() };
}

/** The smallest 1, 2, 2.5 or 5 × 10ⁿ at or above `max` (1 when there is nothing to show). */
export function niceCeiling(max: number): number {
  if (!(max > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) {
    const candidate = Number((step * magnitude).toPrecision(12));
    if (candidate >= max) return candidate;
  }
  return 10 * magnitude;
}

export type ChartMetric = 'count' | 'minutes' | 'cost_usd';

export interface ChartPoint {
  date: string;
  value: number;
}

export interface ChartBar extends ChartPoint {
  x: number;
  y: number;
  width: number;
  height: number;
}

export const pointsOf = (series: CallSeries['data'], metric: ChartMetric): ChartPoint[] => series.map((day) => ({ date: day.date, value: day[metric] }));

/** One bar per point in a plot of `width` × `height` (y grows downwards, as in SVG). */
export function barsOf(points: ChartPoint[], plot: { width: number; height: number }, ceiling: number): ChartBar[] {
  if (points.length === 0) return [];
  const slot = plot.width / points.length;
  const width = Math.max(1, slot * 0.7);
  return points.map((point, i) => {
    const height = ceiling > 0 ? (Math.max(0, point.value) / ceiling) * plot.height : 0;
    return { ...point, x: i * slot + (slot - width) / 2, y: plot.height - height, width, height };
  });
}

/** The dates labelled under the chart: the first, the middle and the last (each once). */
export function labelledDates(points: ChartPoint[]): string[] {
  if (points.length === 0) return [];
  const indexes = [0, Math.floor((points.length - 1) / 2), points.length - 1];
  return [...new Set(indexes)].map((i) => points[i].date);
}

/** 0.1234 → "12.3 %" */
export const percent = (rate: number) => `${(rate * 100).toFixed(1)} %`;

/** 83 450 ms → "1 min 23 s"; under a minute "42 s". */
export function durationText(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const minutes = Math.floor(seconds / 60);
  return minutes > 0 ? `${minutes} min ${seconds % 60} s` : `${seconds} s`;
}

export const minutesText = (minutes: number) => `${new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(minutes)} min`;

export interface Outcome {
  status: string;
  count: number;
  share: number;
}

/** The calls by status, most frequent first, each with its share of the total. */
export function outcomesOf(overview: Pick<CallAnalytics, 'by_status' | 'total_calls'>): Outcome[] {
  return Object.entries(overview.by_status)
    .filter(([, count]) => count > 0)
    .map(([status, count]) => ({ status, count, share: overview.total_calls > 0 ? count / overview.total_calls : 0 }))
    .sort((a, b) => b.count - a.count || a.status.localeCompare(b.status));
}

/** What the chart shows, in words (its text alternative). */
export function chartSummary(points: ChartPoint[], format: (value: number) => string): string {
  if (points.length === 0) return 'No days to show.';
  const total = points.reduce((sum, point) => sum + point.value, 0);
  const busiest = points.reduce((best, point) => (point.value > best.value ? point : best), points[0]);
  const range = `${points[0].date} to ${points[points.length - 1].date}`;
  if (!(busiest.value > 0)) return `${range}: nothing on any day.`;
  return `${range}: ${format(total)} in all; the most on ${busiest.date}, ${format(busiest.value)}.`;
}
