import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { describeError } from '../api/errors.ts';
import { useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, FormError } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { Empty, QueryView } from '../ui/states.tsx';

// The user's signed-in sessions (device, address, when): any but this one can be signed out.

export function SessionsPanel() {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const sessions = useQuery({ queryKey: ['sessions'], queryFn: async () => await api.auth.listSessions({ limit: 100 }) });
  const revoke = useMutation({ mutationFn: (id: string) => api.auth.revokeSession(id), onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['sessions'] }) });
  return (
    <section className="panel" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      <FormError message={revoke.error ? describeError(revoke.error).message : undefined} />
      <QueryView query={sessions} isEmpty={(page) => page.data.length === 0} empty={<Empty title="No active session." />}>
        {(page) => (
          <DataTable caption="Sessions" columns={['Device', 'Address', 'Signed in', 'Last used', 'Sign out']}>
            {page.data.map((session) => (
              <tr key={session.id}>
                <td className="url">{session.device ?? 'Unknown device'}</td>
                <td>{session.ip ?? '—'}</td>
                <td>{dateTime(session.created_at)}</td>
                <td>{dateTime(session.last_used_at)}</td>
                <td>
                  {session.current ? (
                    'This session'
                  ) : (
                    <Button variant="secondary" onPress={() => revoke.mutate(session.id)} isPending={revoke.isPending} aria-label={`Sign out the session from ${dateTime(session.created_at)}`}>
                      Sign out
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryView>
    </section>
  );
}
