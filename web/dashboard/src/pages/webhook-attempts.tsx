import { useQuery } from '@tanstack/react-query';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { dateTime } from '../ui/format.ts';
import { Empty, QueryView } from '../ui/states.tsx';
import { attemptOutcome, durationText } from './webhook-attempt.ts';

// One delivery's attempts in detail (GET /v1/webhooks/deliveries/{id}): when, scheduled or a
// manual replay, the outcome, the receiver's status code, how long it took, and the error.

export function DeliveryAttempts({ id, eventType }: { id: string; eventType: string }) {
  const { api } = useWorkspace();
  const detail = useQuery({ queryKey: useKey('delivery', id), queryFn: () => api.webhooks.retrieveDelivery(id) });
  return (
    <QueryView query={detail} loadingLabel="Loading attempts…" isEmpty={(d) => d.attempts.length === 0} empty={<Empty title="No attempt yet." />}>
      {(d) => (
        <table className="attempts" data-testid={`attempts-${id}`}>
          <caption>Attempts of {eventType}</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Time</th>
              <th scope="col">Trigger</th>
              <th scope="col">Status</th>
              <th scope="col">Response code</th>
              <th scope="col">Duration</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {d.attempts.map((a) => (
              <tr key={a.id}>
                <td>{a.attempt}</td>
                <td>{dateTime(a.started_at)}</td>
                <td>{a.trigger}</td>
                <td>
                  <span className={`badge badge-${attemptOutcome(a) === 'succeeded' ? 'succeeded' : 'failed'}`}>{attemptOutcome(a)}</span>
                </td>
                <td>{a.status_code ?? '—'}</td>
                <td>{durationText(a.duration_ms)}</td>
                <td className="url">{a.error ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </QueryView>
  );
}
