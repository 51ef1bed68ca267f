import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, type TenantWebhook, type WebhookDelivery } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Tab, TabList, TabPanel, Tabs } from 'react-aria-components';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button, Field, Form, FormError } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { SecretOnce } from '../ui/secret.tsx';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';
import { DeliveryAttempts } from './webhook-attempts.tsx';

// Settings > Webhooks: the workspace's own endpoint (its URL, a secret shown once on save or
// rotation, a test event), every delivery (each one's attempts shown on request), and the Failed
// tab where dead deliveries are replayed one by one or all at once.

function Endpoint() {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const key = useKey('tenant-webhook');
  const current = useQuery({
    queryKey: key,
    // No endpoint yet is a 404: the empty state, not an error.
    queryFn: () => api.webhooks.retrieve().catch((error: unknown) => (error instanceof ApiError && error.status === 404 ? null : Promise.reject(error))),
  });
  const [url, setUrl] = useState<string>();
  const [secret, setSecret] = useState<string>();
  const done = (answer: { webhook_secret: string }) => {
    setSecret(answer.webhook_secret);
    void queryClient.invalidateQueries({ queryKey: key });
  };
  const save = useMutation({ mutationFn: (webhook_url: string) => api.webhooks.put({ webhook_url, ...(current.data ? { events: current.data.events as never } : {}) }), onSuccess: done });
  const rotate = useMutation({ mutationFn: () => api.webhooks.rotateSecret({}), onSuccess: done });
  const test = useMutation({ mutationFn: () => api.webhooks.test({}), onSuccess: () => void queryClient.invalidateQueries() });
  const failure = [save, rotate, test].map((m) => m.error).find(Boolean);
  const described = failure ? describeError(failure) : undefined;
  return (
    <section className="panel" aria-labelledby="endpoint-heading">
      <h2 id="endpoint-heading">Workspace endpoint</h2>
      {secret ? <SecretOnce title="Webhook signing secret" value={secret} onDismiss={() => setSecret(undefined)} /> : null}
      <QueryView query={current}>
        {(webhook: TenantWebhook | null) => (
          <Form label="Workspace endpoint" className="form inline" onSubmit={() => save.mutate(url ?? webhook?.webhook_url ?? '')}>
            <Field label="Endpoint URL" name="webhook_url" type="url" value={url ?? webhook?.webhook_url ?? ''} onChange={setUrl} required error={described?.fields.webhook_url} description={webhook ? `Events: ${webhook.events.join(', ')}` : 'No endpoint yet: workspace events are not sent.'} />
            <Button type="submit" isPending={save.isPending}>
              Save endpoint
            </Button>
            {webhook ? (
              <>
                <Button variant="secondary" onPress={() => rotate.mutate()} isPending={rotate.isPending}>
                  Rotate secret
                </Button>
                <Button variant="secondary" onPress={() => test.mutate()} isPending={test.isPending}>
                  Send test event
                </Button>
              </>
            ) : null}
            <span role="status" className="hint">
              {test.isSuccess ? 'Test event queued' : ''}
            </span>
          </Form>
        )}
      </QueryView>
      <FormError message={described && !described.fields.webhook_url ? described.message : undefined} />
    </section>
  );
}

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
