import { useQuery } from '@tanstack/react-query';
import type { Call, WebhookDeliveryDetail } from '@voice-agent-platform/sdk';
import { Link } from 'wouter';
import { useKey, useWorkspace } from '../../api/workspace.tsx';
import { DataTable } from '../../ui/data-table.tsx';
import { Button } from '../../ui/form.tsx';
import { dateTime } from '../../ui/format.ts';
import { Empty, QueryView } from '../../ui/states.tsx';
import { callIdOfPayload, candidatesFor, MAX_OPENED } from './delivery-match.ts';

// The webhook events sent for this call (to the agent's webhook_url or the workspace endpoint):
// each event, its delivery status and last answer. Looked up again when the call moves on.

async function deliveriesOf(api: ReturnType<typeof useWorkspace>['api'], call: Call): Promise<{ list: WebhookDeliveryDetail[]; capped: boolean }> {
  const page = await api.webhooks.listDeliveries({ limit: 100 });
  const candidates = candidatesFor(page.data, call);
  const opened = await Promise.all(candidates.slice(0, MAX_OPENED).map((d) => api.webhooks.retrieveDelivery(d.id)));
  return { list: opened.filter((d) => callIdOfPayload(d.payload) === call.id), capped: candidates.length > MAX_OPENED || page.has_more };
}

export function CallDeliveries({ call }: { call: Call }) {
  const { api } = useWorkspace();
  const deliveries = useQuery({
    queryKey: useKey('call-deliveries', call.id, call.status, call.recording_status, call.analysis_status),
    queryFn: () => deliveriesOf(api, call),
    placeholderData: (previous) => previous,
  });
  return (
    <section aria-labelledby="deliveries-heading" className="panel">
      <div className="page-title">
        <h2 id="deliveries-heading">Webhook events</h2>
        <Button variant="secondary" onPress={() => void deliveries.refetch()} isPending={deliveries.isFetching}>
          {deliveries.isFetching ? 'Looking…' : 'Refresh events'}
        </Button>
      </div>
      <QueryView query={deliveries} loadingLabel="Looking up the events sent…" isEmpty={(found) => found.list.length === 0} empty={<Empty title="No webhook event was sent for this call.">Set a webhook URL on the agent to receive its call events.</Empty>}>
        {(found) => (
          <DataTable caption="Webhook events of the call" columns={['Event', 'Delivery', 'Attempts', 'Last answer', 'Sent']}>
            {found.list.map((d) => (
              <tr key={d.id}>
                <td>{d.event_type}</td>
                <td>
                  <span className={`badge badge-${d.status}`}>{d.status}</span>
                </td>
                <td>{d.attempt_count}</td>
                <td>{d.last_status_code ?? d.last_error ?? '—'}</td>
                <td>{dateTime(d.last_attempt_at ?? d.created_at)}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryView>
      {deliveries.data?.capped ? (
        <p className="hint">
          Only the newest events were searched; <Link href="/webhooks">Webhooks</Link> lists every delivery.
        </p>
      ) : null}
    </section>
  );
}
