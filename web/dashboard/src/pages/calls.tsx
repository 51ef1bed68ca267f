import { useMutation, useQuery } from '@tanstack/react-query';
import type { Call, ListCallsQuery } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Link } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, Field, FormError, SelectField } from '../ui/form.tsx';
import { dateTime, label, usd } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';

// The workspace's calls, newest first, 50 a page (paged with the API's cursors), filtered by
// status, direction, agent and dates, and exported as CSV with the same filters.

const PAGE_SIZE = 50;

const STATUSES: NonNullable<ListCallsQuery['status']>[] = ['queued', 'ringing', 'in_progress', 'completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled'];
const DIRECTIONS: NonNullable<ListCallsQuery['direction']>[] = ['inbound', 'outbound', 'web'];

interface Filters {
  status: string;
  direction: string;
  agent_id: string;
  from: string;
  to: string;
}

/** The filters as the API's query: dates are whole days in the browser's time zone. */
export function queryOf(filters: Filters): ListCallsQuery {
  const query: ListCallsQuery = {};
  if (filters.status) query.status = filters.status as ListCallsQuery['status'];
  if (filters.direction) query.direction = filters.direction as ListCallsQuery['direction'];
  if (filters.agent_id) query.agent_id = filters.agent_id;
  if (filters.from) query.created_after = new Date(`${filters.from}T00:00:00`).toISOString();
  if (filters.to) query.created_before = new Date(`${filters.to}T23:59:59.999`).toISOString();
  return query;
}

function FilterBar({ filters, set }: { filters: Filters; set(next: Filters): void }) {
  const { api } = useWorkspace();
  const agents = useQuery({ queryKey: useKey('agents'), queryFn: async () => (await api.agents.list({ limit: 100 })).data });
  const any = { value: '', label: 'Any' };
  return (
    <fieldset className="filters">
      <legend className="visually-hidden">Filters</legend>
      <SelectField label="Status" name="status" value={filters.status} onChange={(status) => set({ ...filters, status })} options={[any, ...STATUSES.map((s) => ({ value: s, label: label(s) }))]} />
      <SelectField label="Direction" name="direction" value={filters.direction} onChange={(direction) => set({ ...filters, direction })} options={[any, ...DIRECTIONS.map((d) => ({ value: d, label: d }))]} />
      <SelectField label="Agent" name="agent_id" value={filters.agent_id} onChange={(agent_id) => set({ ...filters, agent_id })} options={[any, ...(agents.data ?? []).map((a) => ({ value: a.id, label: a.name }))]} />
      <Field label="From" name="from" type="date" value={filters.from} onChange={(from) => set({ ...filters, from })} />
      <Field label="To" name="to" type="date" value={filters.to} onChange={(to) => set({ ...filters, to })} />
    </fieldset>
  );
}

function ExportButton({ query }: { query: ListCallsQuery }) {
  const { api } = useWorkspace();
  const exporting = useMutation({
    mutationFn: async () => {
      const csv = await (await api.calls.export(query)).bytes();
      const url = URL.createObjectURL(new Blob([csv as BlobPart], { type: 'text/csv' }));
      const link = Object.assign(document.createElement('a'), { href: url, download: `calls-${new Date().toISOString().slice(0, 10)}.csv` });
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    },
  });
  return (
    <>
      <Button variant="secondary" onPress={() => exporting.mutate()} isPending={exporting.isPending}>
        {exporting.isPending ? 'Exporting…' : 'Export CSV'}
      </Button>
      <FormError message={exporting.error ? describeError(exporting.error).message : undefined} />
    </>
  );
}

function CallsTable({ calls }: { calls: Call[] }) {
  return (
    <DataTable caption="Calls" columns={['Call', 'Status', 'Direction', 'To / from', 'Duration', 'Cost']}>
      {calls.map((call) => (
        <tr key={call.id}>
          <td>
            <Link href={`/calls/${call.id}`}>{dateTime(call.created_at)}</Link>
          </td>
          <td>
            <span className={`badge badge-${call.status}`}>{label(call.status)}</span>
          </td>
          <td>{call.direction}</td>
          <td>{call.direction === 'inbound' ? call.from : call.to}</td>
          <td>{call.duration_seconds} s</td>
          <td>{usd(call.cost_usd)}</td>
        </tr>
      ))}
    </DataTable>
  );
}

function Pager({ page, count, hasMore, busy, previous, next }: { page: number; count: number; hasMore: boolean; busy: boolean; previous(): void; next(): void }) {
  const first = (page - 1) * PAGE_SIZE + 1;
  return (
    <nav className="pager" aria-label="Pages of calls">
      <Button variant="secondary" onPress={previous} isDisabled={page === 1} isPending={busy}>
        Previous page
      </Button>
      <span role="status">
        Page {page}: calls {first}–{first + count - 1}
      </span>
      <Button variant="secondary" onPress={next} isDisabled={!hasMore} isPending={busy}>
        Next page
      </Button>
    </nav>
  );
}

export function CallsPage() {
  const { api } = useWorkspace();
  const [filters, setFilters] = useState<Filters>({ status: '', direction: '', agent_id: '', from: '', to: '' });
  // The cursor of each page seen so far; the last is the page shown (undefined: the first).
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors.at(-1);
  const query = queryOf(filters);
  const calls = useQuery({
    queryKey: useKey('calls', query, cursor),
    queryFn: async () => await api.calls.list({ ...query, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }),
    placeholderData: (previous) => previous,
  });
  const filter = (next: Filters) => {
    setFilters(next);
    setCursors([undefined]);
  };
  return (
    <>
      <PageTitle actions={<ExportButton query={query} />}>Calls</PageTitle>
      <FilterBar filters={filters} set={filter} />
      <QueryView query={calls} isEmpty={(page) => page.data.length === 0} empty={<Empty title="No calls match.">Calls placed through the API, campaigns or widgets appear here.</Empty>}>
        {(page) => (
          <>
            <CallsTable calls={page.data} />
            {page.has_more || cursors.length > 1 ? (
              <Pager
                page={cursors.length}
                count={page.data.length}
                hasMore={page.has_more && page.next_cursor !== null}
                busy={calls.isPlaceholderData}
                previous={() => setCursors((list) => list.slice(0, -1))}
                next={() => setCursors((list) => [...list, page.next_cursor ?? undefined])}
              />
            ) : null}
          </>
        )}
      </QueryView>
    </>
  );
}
