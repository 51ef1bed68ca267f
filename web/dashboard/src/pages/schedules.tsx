import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ListSchedulesQuery, Schedule } from '@voice-agent-platform/sdk';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { ConfirmAction } from '../ui/confirm-action.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, FormError, SelectField } from '../ui/form.tsx';
import { dateTime, label } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';
import { useAgentOptions } from './agent-options.tsx';
import { ScheduleForm } from './schedule-form.tsx';

// Single calls placed at a set time: the list (by status), a new one, and while still scheduled
// a change, "run now" or a cancel. A fired schedule links to its call.

const STATUSES: NonNullable<ListSchedulesQuery['status']>[] = ['scheduled', 'dispatched', 'failed', 'canceled'];

function Outcome({ schedule }: { schedule: Schedule }) {
  if (schedule.call_id) return <Link href={`/calls/${schedule.call_id}`}>Open the call{schedule.late ? ' (fired late)' : ''}</Link>;
  if (schedule.error) return <span>{schedule.error.message}</span>;
  return <span>—</span>;
}

function Row({ schedule, onEdit }: { schedule: Schedule; onEdit(): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const { nameOf } = useAgentOptions();
  const [canceling, setCanceling] = useState(false);
  const done = () => void queryClient.invalidateQueries();
  const run = useMutation({ mutationFn: () => api.schedules.run(schedule.id), onSuccess: done });
  const cancel = useMutation({ mutationFn: () => api.schedules.cancel(schedule.id), onSuccess: done });
  const when = dateTime(schedule.scheduled_at);
  return (
    <tr>
      <td>{when}</td>
      <td>{schedule.to}</td>
      <td>{nameOf(schedule.agent_id)}</td>
      <td>
        <span className={`badge badge-${schedule.status}`}>{label(schedule.status)}</span>
      </td>
      <td>
        <Outcome schedule={schedule} />
      </td>
      <td>
        {schedule.status === 'scheduled' ? (
          <div className="actions">
            <Button variant="secondary" onPress={onEdit} aria-label={`Edit the call to ${schedule.to} at ${when}`}>
              Edit
            </Button>
            <Button variant="secondary" onPress={() => run.mutate()} isPending={run.isPending} aria-label={`Run now: the call to ${schedule.to}`}>
              Run now
            </Button>
            <Button variant="danger" onPress={() => setCanceling(true)} aria-label={`Cancel the call to ${schedule.to} at ${when}`}>
              Cancel
            </Button>
          </div>
        ) : null}
        <FormError message={run.error ? describeError(run.error).message : undefined} />
        {canceling ? <ConfirmAction title={`Cancel the call to ${schedule.to}?`} body={`It will not be placed at ${when}.`} confirmLabel="Cancel schedule" mutation={cancel} onClose={() => setCanceling(false)} /> : null}
      </td>
    </tr>
  );
}

export function SchedulesPage() {
  const { api } = useWorkspace();
  const [status, setStatus] = useState('');
  const [editing, setEditing] = useState<Schedule>();
  const formHeading = useRef<HTMLHeadingElement>(null);
  // Edit moves the keyboard's focus up to the form it fills.
  useEffect(() => {
    if (editing) formHeading.current?.focus();
  }, [editing]);
  const query: ListSchedulesQuery = status ? { status: status as ListSchedulesQuery['status'] } : {};
  const schedules = useQuery({ queryKey: useKey('schedules', query), queryFn: async () => await api.schedules.list({ ...query, limit: 100 }), refetchInterval: 5000 });
  return (
    <>
      <PageTitle>Schedules</PageTitle>
      <section className="panel" aria-labelledby="schedule-form-heading">
        <h2 id="schedule-form-heading" ref={formHeading} tabIndex={-1}>{editing ? `Change the call to ${editing.to}` : 'Schedule a call'}</h2>
        {editing ? <ScheduleForm key={editing.id} schedule={editing} onDone={() => setEditing(undefined)} /> : <ScheduleForm key="new" onDone={() => undefined} />}
      </section>
      <fieldset className="filters">
        <legend className="visually-hidden">Filters</legend>
        <SelectField label="Status" name="status" value={status} onChange={setStatus} options={[{ value: '', label: 'Any' }, ...STATUSES.map((s) => ({ value: s, label: label(s) }))]} />
      </fieldset>
      <QueryView query={schedules} isEmpty={(page) => page.data.length === 0} empty={<Empty title="No schedules match.">Schedule a call above; it is placed at its time.</Empty>}>
        {(page) => (
          <DataTable caption="Schedules" columns={['When', 'To', 'Agent', 'Status', 'Outcome', 'Actions']}>
            {page.data.map((schedule) => (
              <Row key={schedule.id} schedule={schedule} onEdit={() => setEditing(schedule)} />
            ))}
          </DataTable>
        )}
      </QueryView>
    </>
  );
}
