import type { CallSeries } from '@voice-agent-platform/sdk';
import { useId } from 'react';
import { usd } from '../ui/format.ts';
import { barsOf, type ChartMetric, chartSummary, labelledDates, minutesText, niceCeiling, pointsOf } from './analytics-scale.ts';

// The calls per day as a hand-written SVG bar chart: a text alternative naming the total and the
// busiest day, a title per bar, and the same figures as a table for those who prefer one.

// Drawn small (560 wide) so that its text stays legible when scaled down to a phone.
const VIEW = { width: 560, height: 230 };
const PLOT = { left: 84, top: 12, width: 464, height: 176 };

export const METRICS: Record<ChartMetric, { label: string; format(value: number): string }> = {
  count: { label: 'Calls', format: (n) => `${n} ${n === 1 ? 'call' : 'calls'}` },
  minutes: { label: 'Minutes', format: minutesText },
  cost_usd: { label: 'Cost', format: usd },
};

function Axis({ ceiling, format, integers }: { ceiling: number; format(value: number): string; integers: boolean }) {
  // Counts are whole: no "0.5" tick.
  const ticks = [0, ceiling / 2, ceiling].filter((tick) => !integers || Number.isInteger(tick));
  return (
    <g>
      {ticks.map((tick) => {
        const y = PLOT.top + PLOT.height - (tick / ceiling) * PLOT.height;
        return (
          <g key={tick}>
            <line className="chart-grid" x1={PLOT.left} x2={PLOT.left + PLOT.width} y1={y} y2={y} />
            <text x={PLOT.left - 6} y={y + 4} textAnchor="end">
              {format(tick)}
            </text>
          </g>
        );
      })}
    </g>
  );
}

function DateLabels({ dates, count }: { dates: string[]; count: number }) {
  const slot = PLOT.width / Math.max(1, count);
  return (
    <g>
      {dates.map((date, i) => {
        const index = i === 0 ? 0 : i === dates.length - 1 ? count - 1 : Math.floor((count - 1) / 2);
        const anchor = i === 0 && dates.length > 1 ? 'start' : i === dates.length - 1 && dates.length > 1 ? 'end' : 'middle';
        const x = anchor === 'start' ? PLOT.left + index * slot : anchor === 'end' ? PLOT.left + (index + 1) * slot : PLOT.left + (index + 0.5) * slot;
        return (
          <text key={date} x={x} y={VIEW.height - 14} textAnchor={anchor}>
            {date}
          </text>
        );
      })}
    </g>
  );
}

export function CallsChart({ series, metric }: { series: CallSeries['data']; metric: ChartMetric }) {
  const titleId = useId();
  const { label, format } = METRICS[metric];
  const points = pointsOf(series, metric);
  const ceiling = niceCeiling(Math.max(0, ...points.map((p) => p.value)));
  const bars = barsOf(points, PLOT, ceiling);
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${VIEW.width} ${VIEW.height}`} role="img" aria-labelledby={titleId} data-testid="calls-chart">
        <title id={titleId}>{`${label} per day, ${chartSummary(points, format)}`}</title>
        <Axis ceiling={ceiling} format={metric === 'count' ? String : format} integers={metric === 'count'} />
        <g transform={`translate(${PLOT.left} ${PLOT.top})`}>
          {bars.map((bar) => (
            <rect key={bar.date} className="chart-bar" x={bar.x} y={bar.value > 0 ? Math.min(bar.y, PLOT.height - 1) : PLOT.height} width={bar.width} height={bar.value > 0 ? Math.max(bar.height, 1) : 0} data-date={bar.date} data-value={bar.value}>
              <title>{`${bar.date}: ${format(bar.value)}`}</title>
            </rect>
          ))}
        </g>
        <line className="chart-axis" x1={PLOT.left} x2={PLOT.left + PLOT.width} y1={PLOT.top + PLOT.height} y2={PLOT.top + PLOT.height} />
        <DateLabels dates={labelledDates(points)} count={points.length} />
      </svg>
      <figcaption className="hint">{chartSummary(points, format)} Days are UTC.</figcaption>
      <details>
        <summary>The figures by day</summary>
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Calls</th>
                <th scope="col">Minutes</th>
                <th scope="col">Cost</th>
              </tr>
            </thead>
            <tbody>
              {series.map((day) => (
                <tr key={day.date}>
                  <td>{day.date}</td>
                  <td>{day.count}</td>
                  <td>{minutesText(day.minutes)}</td>
                  <td>{usd(day.cost_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
