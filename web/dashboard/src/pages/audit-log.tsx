import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { AuditEntry } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, Field, FormError, SelectField } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';
import { type AuditFilters, type AuditPaging, actorLabel, auditFilterProblem, auditQueryOf, currentCursor, FIRST_AUDIT_PAGE, NO_AUDIT_FILTERS, newerPage, olderPage, pageNumber, requestLabel } from './audit-query.ts';
import { managesPeople } from './people-roles.ts';

// The workspace's audit trail (every write and API-key use), newest first: filtered by who acted
// (a member or an API key, or anyone picked in the table) and by dates, a page at a time. Owners
// and admins only.

export const AUDIT_PAGE_SIZE = 25;

/** An actor to filter by: a member, an API key, or one picked from the entries (a former member, a deleted key). */
interface Actor {
  id: string;
  label: string;
}

function AuditFilterBar({ filters, set, picked }: { filters: AuditFilters; set(next: AuditFilters): void; picked: Actor | undefined }) {
  const { api, workspace } = useWorkspace();
  const members = useQuery({ queryKey: useKey('members'), queryFn: async () => await api.workspaces.listMembers(workspace.id, { limit: 100 }) });
  const keys = useQuery({ queryKey: useKey('api-keys'), queryFn: async () => (await api.apiKeys.list({ limit: 100 })).data });
  const actors = [
    { value: '', label: 'Anyone' },
    ...(members.data?.data ?? []).map((m) => ({ value: m.user_id, label: m.email })),
    ...(keys.data ?? []).map((k) => ({ value: k.id, label: `API key ${k.name}` })),
  ];
  if (picked && !actors.some((a) => a.value === picked.id)) actors.push({ value: picked.id, label: picked.label });
  return (
    <fieldset className="filters">
      <legend className="visually-hidden">Filters</legend>
      <SelectField label="Who" name="actor_id" value={filters.actor_id} onChange={(actor_id) => set({ ...filters, actor_id })} options={actors} />
      <Field label="From" name="from" type="date" value={filters.from} onChange={(from) => set({ ...filters, from })} />
      <Field label="To" name="to" type="date" value={filters.to} onChange={(to) => set({ ...filters, to })} />
    </fieldset>
  );
}

function AuditTable({ entries, pick }: { entries: AuditEntry[]; pick(actor: Actor): void }) {
  return (
    <DataTable caption="Audit log" columns={['When', 'Who', 'Action', 'Request', 'Resource', 'Status', 'From']}>
      {entries.map((entry) => (
        <tr key={entry.id}>
          <td>{dateTime(entry.created_at)}</td>
          <td className="url">
            <Button variant="link" onPress={() => pick({ id: entry.actor.id, label: actorLabel(entry) })} aria-label={`Show only ${actorLabel(entry)}`}>
              {actorLabel(entry)}
            </Button>
          </td>
          <td>
            <code>{entry.action}</code>
          </td>
          <td className="url">{requestLabel(entry)}</td>
          <td className="url">{entry.resource_id ?? '—'}</td>
          <td>{entry.status_code ?? '—'}</td>
          <td>{entry.ip ?? '—'}</td>
        </tr>
      ))}
    </DataTable>
  );
}

function Pager({ paging, hasMore, nextCursor, go }: { paging: AuditPaging; hasMore: boolean; nextCursor: string | null; go(next: AuditPaging): void }) {
  return (
    <nav className="pager" aria-label="Audit log pages">
      <Button variant="secondary" onPress={() => go(newerPage(paging))} isDisabled={pageNumber(paging) === 1}>
        Newer entries
      </Button>
      <span aria-live="polite">Page {pageNumber(paging)}</span>
      <Button variant="secondary" onPress={() => go(olderPage(paging, nextCursor))} isDisabled={!hasMore}>
        Older entries
      </Button>
    </nav>
  );
}

function AuditEntries({ filters, pick }: { filters: AuditFilters; pick(actor: Actor): void }) {
  const { api } = useWorkspace();
  const [paging, setPaging] = useState<AuditPaging>(FIRST_AUDIT_PAGE);
  const cursor = currentCursor(paging);
  const query = { ...auditQueryOf(filters), limit: AUDIT_PAGE_SIZE, ...(cursor ? { cursor } : {}) };
  const entries = useQuery({ queryKey: useKey('audit-log', query), queryFn: async () => await api.auditLog.list(query), placeholderData: keepPreviousData });
  return (
    <QueryView query={entries} isEmpty={(page) => page.data.length === 0} empty={<Empty title="No entries match.">Writes through the API and the dashboard, and API-key use, appear here.</Empty>}>
      {(page) => (
        <>
          <AuditTable entries={page.data} pick={pick} />
          <Pager paging={paging} hasMore={page.has_more} nextCursor={page.next_cursor} go={setPaging} />
        </>
      )}
    </QueryView>
  );
}

export function AuditLogPage() {
  const { workspace } = useWorkspace();
  const [filters, setFilters] = useState<AuditFilters>(NO_AUDIT_FILTERS);
  const [picked, setPicked] = useState<Actor>();
  const pick = (actor: Actor) => {
    setPicked(actor);
    setFilters({ ...filters, actor_id: actor.id });
  };
  const problem = auditFilterProblem(filters);
  if (!managesPeople(workspace.role)) {
    return (
      <>
        <PageTitle>Audit log</PageTitle>
        <Empty title="Only owners and admins read the audit log.">Your role in {workspace.name} is {workspace.role ?? 'unknown'}.</Empty>
      </>
    );
  }
  return (
    <>
      <PageTitle>Audit log</PageTitle>
      <AuditFilterBar filters={filters} set={setFilters} picked={picked} />
      {/* A new filter starts again from the newest page (the key drops the paging state). */}
      {problem ? <FormError message={problem} /> : <AuditEntries key={JSON.stringify(filters)} filters={filters} pick={pick} />}
    </>
  );
}
