import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { WebhookDelivery } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Tab, TabList, TabPanel, Tabs } from 'react-aria-components';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button, FormError } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';
import { DeliveryAttempts } from './webhook-attempts.tsx';
import { Endpoint } from './webhook-endpoint.tsx';

// Settings > Webhooks: the workspace's own endpoint (webhook-endpoint.tsx: its URL and events, a
// secret shown once on save or rotation, a test event), every delivery (each one's attempts shown
// on request), and the Failed tab where dead deliveries are replayed one by one or all at once.

/** A delivery's row, and under it, once opened, its attempts. */
function DeliveryRow({ delivery: d, replay }: { delivery: WebhookDelivery; replay?: (id: string) => void }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <tr>
        <td>{d.event_type}</td>
        <td className="url">{d.url}</td>
        <td>
          <span className={`badge badge-${d.status}`}>{d.status}</span>
        </td>
        <td>
          {d.attempt_count} / {d.max_attempts}
        </td>
        <td>{d.last_status_code ?? d.last_error ?? '—'}</td>
        <td>{dateTime(d.created_at)}</td>
        <td>
          <Button
            variant="link"
            onPress={() => setOpen(!open)}
            aria-expanded={open}
            aria-controls={open ? `attempts-row-${d.id}` : undefined}
            aria-label={`Attempts of ${d.event_type} ${d.id}`}
          >
            Attempts
          </Button>
        </td>
        {replay ? (
          <td>
            <Button variant="secondary" onPress={() => replay(d.id)} aria-label={`Replay ${d.event_type} ${d.id}`}>
              Replay
            </Button>
          </td>
        ) : null}
      </tr>
      {open ? (
        <tr id={`attempts-row-${d.id}`} className="attempts-row">
          <td colSpan={replay ? 8 : 7}>
            <DeliveryAttempts id={d.id} eventType={d.event_type} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

function DeliveryTable({ rows, replay }: { rows: WebhookDelivery[]; replay?: (id: string) => void }) {
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">To</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last answer</th>
            <th scope="col">Created</th>
            <th scope="col">Details</th>
            {replay ? <th scope="col">Replay</th> : null}
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <DeliveryRow key={d.id} delivery={d} replay={replay} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Deliveries() {
  const { api } = useWorkspace();
  const deliveries = useQuery({ queryKey: useKey('deliveries'), queryFn: async () => (await api.webhooks.listDeliveries({ limit: 50 })).data });
  return (
    <QueryView query={deliveries} isEmpty={(rows) => rows.length === 0} empty={<Empty title="No deliveries yet." />}>
      {(rows) => <DeliveryTable rows={rows} />}
    </QueryView>
  );
}

function Failed() {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const failed = useQuery({ queryKey: useKey('deliveries-failed'), queryFn: async () => (await api.webhooks.listFailedDeliveries({ limit: 50 })).data });
  const [note, setNote] = useState('');
  const after = (text: string) => {
    setNote(text);
    void queryClient.invalidateQueries();
  };
  const one = useMutation({ mutationFn: (id: string) => api.webhooks.replayFailedDelivery(id, {}), onSuccess: () => after('Replay queued') });
  const all = useMutation({ mutationFn: () => api.webhooks.replayFailedDeliveries({}), onSuccess: (r) => after(`${r.replayed} ${r.replayed === 1 ? 'delivery' : 'deliveries'} queued again`) });
  const error = one.error ?? all.error;
  return (
    <>
      <p role="status" className="hint">
        {note}
      </p>
      <FormError message={error ? describeError(error).message : undefined} />
      <QueryView query={failed} isEmpty={(rows) => rows.length === 0} empty={<Empty title="No failed deliveries." />}>
        {(rows) => (
          <>
            <Button variant="secondary" onPress={() => all.mutate()} isPending={all.isPending}>
              Replay all
            </Button>
            <DeliveryTable rows={rows} replay={(id) => one.mutate(id)} />
          </>
        )}
      </QueryView>
    </>
  );
}

export function WebhooksPage() {
  return (
    <>
      <PageTitle>Webhooks</PageTitle>
      <Endpoint />
      <Tabs className="tabs">
        <TabList aria-label="Deliveries">
          <Tab id="all">Deliveries</Tab>
          <Tab id="failed">Failed</Tab>
        </TabList>
        <TabPanel id="all">
          <Deliveries />
        </TabPanel>
        <TabPanel id="failed">
          <Failed />
        </TabPanel>
      </Tabs>
    </>
  );
}
