import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import type { DoNotCallEntry } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, Field, Form, FormError } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, ErrorState, Loading } from '../ui/states.tsx';
import { ImportList } from './do-not-call-import.tsx';
import { E164_EXAMPLE, e164Problem, toE164 } from './phone-number-input.ts';

// The do-not-call list: numbers outbound calls, campaigns and schedules never dial. A number is
// added (checked as E.164 first), removed, or many are imported from a pasted list or a file.

function AddNumber({ onDone }: { onDone(note: string): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [number, setNumber] = useState('');
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string>();
  const add = useMutation({
    mutationFn: (e164: string) => api.dnc.add({ number: e164, ...(reason.trim() ? { reason: reason.trim() } : {}) }),
    onSuccess: (entry) => {
      void queryClient.invalidateQueries();
      setNumber('');
      setReason('');
      onDone(`${entry.number} is on the list.`);
    },
  });
  const submit = () => {
    const found = e164Problem(number);
    setProblem(found);
    const e164 = toE164(number);
    if (!found && e164) add.mutate(e164);
  };
  const failure = add.error ? describeError(add.error) : undefined;
  return (
    <Form label="Add a number" className="form inline" onSubmit={submit}>
      <Field label="Number" name="number" type="tel" value={number} onChange={setNumber} required description={`International format, e.g. ${E164_EXAMPLE}.`} error={problem ?? failure?.fields.number} />
      <Field label="Reason (optional)" name="reason" value={reason} onChange={setReason} error={failure?.fields.reason} />
      <Button type="submit" isPending={add.isPending}>
        Add to list
      </Button>
      <FormError message={failure && !failure.fields.number && !failure.fields.reason ? failure.message : undefined} />
    </Form>
  );
}

function EntryTable({ entries, onDone }: { entries: DoNotCallEntry[]; onDone(note: string): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: (number: string) => api.dnc.remove(number),
    onSuccess: (_, number) => {
      void queryClient.invalidateQueries();
      onDone(`${number} is off the list: it may be called again.`);
    },
  });
  return (
    <>
      <FormError message={remove.error ? describeError(remove.error).message : undefined} />
      <DataTable caption="Do-not-call list" columns={['Number', 'Reason', 'Added', 'Remove']}>
        {entries.map((entry) => (
          <tr key={entry.number} data-number={entry.number}>
            <td>{entry.number}</td>
            <td>{entry.reason ?? '—'}</td>
            <td>{dateTime(entry.created_at)}</td>
            <td>
              <Button variant="secondary" onPress={() => remove.mutate(entry.number)} isPending={remove.isPending} aria-label={`Remove ${entry.number}`}>
                Remove
              </Button>
            </td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

/** The list, 100 entries at a time. */
function Entries({ onDone }: { onDone(note: string): void }) {
  const { api } = useWorkspace();
  const list = useInfiniteQuery({
    queryKey: useKey('dnc'),
    queryFn: async ({ pageParam }) => await api.dnc.list({ limit: 100, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: '',
    getNextPageParam: (page) => (page.has_more && page.next_cursor ? page.next_cursor : undefined),
  });
  if (list.isPending) return <Loading label="Loading the list…" />;
  if (list.isError) return <ErrorState error={list.error} retry={() => void list.refetch()} />;
  const entries = list.data.pages.flatMap((page) => page.data);
  if (entries.length === 0) return <Empty title="No numbers on the list.">Add one above, or import a list below.</Empty>;
  return (
    <>
      <EntryTable entries={entries} onDone={onDone} />
      {list.hasNextPage ? (
        <Button variant="secondary" onPress={() => void list.fetchNextPage()} isPending={list.isFetchingNextPage}>
          {list.isFetchingNextPage ? 'Loading…' : 'Show more'}
        </Button>
      ) : null}
    </>
  );
}

export function DoNotCallPage() {
  const [note, setNote] = useState('');
  return (
    <>
      <PageTitle>Do not call</PageTitle>
      <p>Numbers on this list are never dialled: outbound calls and schedules to them are refused, campaigns skip them.</p>
      <AddNumber onDone={setNote} />
      <p role="status" className="hint">
        {note}
      </p>
      <Entries onDone={setNote} />
      <ImportList />
    </>
  );
}
