import { useQuery } from '@tanstack/react-query';
import type { Pricing, Usage } from '@voice-agent-platform/sdk';
import { useId } from 'react';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { label, usd } from '../ui/format.ts';
import { Empty, QueryView } from '../ui/states.tsx';
import { busiestDay, usageChart } from './billing-logic.ts';

// What the workspace spent over the last 30 days: a bar per day (an SVG drawn here, described in
// words for screen readers, with the same figures as a table), the split by kind, and the prices.

const WIDTH = 600;
const HEIGHT = 160;
const AXIS = 60;
/** Room above the chart for the top amount's label. */
const TOP = 16;

const shortDate = (date: string) => new Date(`${date}T00:00:00Z`).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

function UsageBars({ days, summaryId }: { days: Usage['by_day']; summaryId: string }) {
  const chart = usageChart(days, WIDTH - AXIS, HEIGHT);
  return (
    <svg className="usage-chart" viewBox={`0 0 ${WIDTH} ${TOP + HEIGHT + 28}`} role="img" aria-label="Spending per day" aria-describedby={summaryId}>
      {chart.ticks.map((tick) => (
        <g key={tick.amountUsd}>
          <line x1={AXIS} x2={WIDTH} y1={TOP + tick.y} y2={TOP + tick.y} className="usage-grid" />
          <text x={AXIS - 6} y={TOP + tick.y + 5} textAnchor="end" className="usage-axis">
            {usd(tick.amountUsd)}
          </text>
        </g>
      ))}
      {chart.bars.map((bar) => (
        <rect key={bar.date} x={AXIS + bar.x} y={TOP + bar.y} width={bar.width} height={bar.height} className="usage-bar">
          <title>{`${shortDate(bar.date)}: ${usd(bar.amountUsd)}`}</title>
        </rect>
      ))}
      {days.length > 0 ? (
        <g className="usage-axis">
          <text x={AXIS} y={TOP + HEIGHT + 22}>
            {shortDate(days[0].date)}
          </text>
          <text x={WIDTH} y={TOP + HEIGHT + 22} textAnchor="end">
            {shortDate(days[days.length - 1].date)}
          </text>
        </g>
      ) : null}
    </svg>
  );
}

function UsageReport({ usage }: { usage: Usage }) {
  const summaryId = useId();
  const busiest = busiestDay(usage.by_day);
  const first = usage.by_day[0]?.date;
  const last = usage.by_day.at(-1)?.date;
  return (
    <>
      <p id={summaryId} data-testid="usage-summary">
        {`${usd(usage.total_usd)} spent from ${first ? shortDate(first) : '—'} to ${last ? shortDate(last) : '—'}`}
        {busiest ? `; the most on ${shortDate(busiest.date)} (${usd(busiest.amount_usd)}).` : '.'}
      </p>
      <UsageBars days={usage.by_day} summaryId={summaryId} />
      {usage.by_kind.length > 0 ? (
        <ul className="usage-kinds">
          {usage.by_kind.map((kind) => (
            <li key={kind.kind}>
              {`${label(kind.kind)}: ${usd(kind.amount_usd)} (${kind.count} ${kind.count === 1 ? 'charge' : 'charges'})`}
            </li>
          ))}
        </ul>
      ) : null}
      <details className="usage-table">
        <summary>Spending per day as a table</summary>
        <DataTable caption="Spending per day" columns={['Day', 'Spent']}>
          {usage.by_day.map((day) => (
            <tr key={day.date}>
              <td>{day.date}</td>
              <td>{usd(day.amount_usd)}</td>
            </tr>
          ))}
        </DataTable>
      </details>
    </>
  );
}

export function UsagePanel() {
  const { api } = useWorkspace();
  const usage = useQuery({ queryKey: useKey('usage'), queryFn: () => api.wallet.usage() });
  return (
    <section className="panel" aria-labelledby="usage-heading">
      <h2 id="usage-heading">Usage, last 30 days</h2>
      <QueryView query={usage} isEmpty={(data) => data.total_usd === 0} empty={<Empty title="Nothing spent in the last 30 days.">Calls, voice sessions and phone numbers are billed from the balance.</Empty>}>
        {(data) => <UsageReport usage={data} />}
      </QueryView>
    </section>
  );
}

export function PricingPanel() {
  const { api } = useWorkspace();
  const pricing = useQuery({ queryKey: ['pricing'], queryFn: () => api.wallet.pricing(), staleTime: 5 * 60_000 });
  return (
    <section className="panel" aria-labelledby="pricing-heading">
      <h2 id="pricing-heading">Pricing</h2>
      <QueryView query={pricing}>
        {(data: Pricing) => (
          <dl className="facts" data-testid="pricing">
            <div>
              <dt>Phone calls</dt>
              <dd>{usd(data.rates.call_per_min_usd)} per minute</dd>
            </div>
            <div>
              <dt>Web voice and voice sessions</dt>
              <dd>{usd(data.rates.web_voice_per_min_usd)} per minute</dd>
            </div>
            <div>
              <dt>Phone numbers</dt>
              <dd>{usd(data.rates.phone_number_monthly_usd)} per month</dd>
            </div>
          </dl>
        )}
      </QueryView>
      <p className="hint">Calls and sessions are billed per started second.</p>
    </section>
  );
}
