import { useQuery } from '@tanstack/react-query';
import type { CallAnalytics } from '@voice-agent-platform/sdk';
import { useMemo, useState } from 'react';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { SelectField } from '../ui/form.tsx';
import { label, usd } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';
import { CallsChart, METRICS } from './analytics-chart.tsx';
import { type ChartMetric, durationText, minutesText, outcomesOf, percent, RANGE_CHOICES, rangeOfDays } from './analytics-scale.ts';

// The workspace's call figures over the last 7, 30 or 90 days (the analytics endpoints): calls,
// connected minutes, cost, average length, transfer rate and outcomes, for every agent or one,
// and the calls per day as a chart.

function Figures({ overview }: { overview: CallAnalytics }) {
  const facts: Array<[string, string]> = [
    ['Calls', String(overview.total_calls)],
    ['Connected minutes', minutesText(overview.minutes)],
    ['Cost', usd(overview.cost_usd)],
    ['Average answered call', durationText(overview.avg_duration_ms)],
    ['Transfer rate', percent(overview.transfer_rate)],
  ];
  return (
    <dl className="facts">
      {facts.map(([name, value]) => (
        <div key={name} data-field={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Outcomes({ overview }: { overview: CallAnalytics }) {
  return (
    <DataTable caption="Outcomes" columns={['Outcome', 'Calls', 'Share']}>
      {outcomesOf(overview).map((outcome) => (
        <tr key={outcome.status}>
          <td>
            <span className={`badge badge-${outcome.status}`}>{label(outcome.status)}</span>
          </td>
          <td>{outcome.count}</td>
          <td>{percent(outcome.share)}</td>
        </tr>
      ))}
    </DataTable>
  );
}

function Controls(props: { days: number; setDays(days: number): void; agentId: string; setAgentId(id: string): void; metric: ChartMetric; setMetric(metric: ChartMetric): void }) {
  const { api } = useWorkspace();
  const agents = useQuery({ queryKey: useKey('agents'), queryFn: async () => (await api.agents.list({ limit: 100 })).data });
  return (
    <fieldset className="filters">
      <legend className="visually-hidden">Period and agent</legend>
      <SelectField label="Period" name="days" value={String(props.days)} onChange={(value) => props.setDays(Number(value))} options={RANGE_CHOICES.map((n) => ({ value: String(n), label: `Last ${n} days` }))} />
      <SelectField label="Agent" name="agent_id" value={props.agentId} onChange={props.setAgentId} options={[{ value: '', label: 'Every agent' }, ...(agents.data ?? []).map((a) => ({ value: a.id, label: a.name }))]} />
      <SelectField label="Chart" name="metric" value={props.metric} onChange={(value) => props.setMetric(value as ChartMetric)} options={Object.entries(METRICS).map(([value, m]) => ({ value, label: m.label }))} />
    </fieldset>
  );
}

export function AnalyticsPage() {
  const { api } = useWorkspace();
  const [days, setDays] = useState<number>(30);
  const [agentId, setAgentId] = useState('');
  const [metric, setMetric] = useState<ChartMetric>('count');
  const range = useMemo(() => rangeOfDays(days, new Date()), [days]);
  const overview = useQuery({ queryKey: useKey('analytics-overview', range, agentId), queryFn: () => (agentId ? api.analytics.agent(agentId, range) : api.analytics.overview(range)) });
  const series = useQuery({ queryKey: useKey('analytics-series', range), queryFn: () => api.analytics.calls(range) });
  return (
    <>
      <PageTitle>Analytics</PageTitle>
      <Controls days={days} setDays={setDays} agentId={agentId} setAgentId={setAgentId} metric={metric} setMetric={setMetric} />
      <QueryView query={overview} isEmpty={(data) => data.total_calls === 0} empty={<Empty title={`No calls in the last ${days} days.`}>Calls placed through the API, campaigns or widgets are counted here.</Empty>}>
        {(data) => (
          <>
            <section className="panel" aria-labelledby="figures-heading">
              <h2 id="figures-heading">{agentId ? 'This agent' : 'Every agent'}</h2>
              <Figures overview={data} />
            </section>
            <section className="panel" aria-labelledby="outcomes-heading">
              <h2 id="outcomes-heading">Outcomes</h2>
              <Outcomes overview={data} />
            </section>
          </>
        )}
      </QueryView>
      <section className="panel" aria-labelledby="per-day-heading">
        <h2 id="per-day-heading">{METRICS[metric].label} per day, every agent</h2>
        <QueryView query={series}>{(data) => <CallsChart series={data.data} metric={metric} />}</QueryView>
      </section>
    </>
  );
}
