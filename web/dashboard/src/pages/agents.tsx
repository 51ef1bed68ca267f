import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, Field, Form, FormError } from '../ui/form.tsx';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';
import { keepSecret } from './secret-flash.ts';

// The agents of the workspace, and a new one (named here, edited on its own page, where its
// webhook secret is shown once).

function NewAgent() {
  const { api } = useWorkspace();
  const [name, setName] = useState('');
  const [, navigate] = useLocation();
  const queryClient = useQueryClient();
  const create = useMutation({
    mutationFn: () => api.agents.create({ name: name.trim() }),
    onSuccess: (agent) => {
      keepSecret(agent.id, agent.webhook_secret);
      void queryClient.invalidateQueries();
      navigate(`/agents/${agent.id}`);
    },
  });
  const failure = create.error ? describeError(create.error) : undefined;
  return (
    <Form label="New agent" className="form inline" onSubmit={() => create.mutate()}>
      <Field label="New agent's name" name="name" value={name} onChange={setName} required error={failure?.fields.name} />
      <Button type="submit" isDisabled={name.trim() === ''} isPending={create.isPending}>
        Create agent
      </Button>
      <FormError message={failure && !failure.fields.name ? failure.message : undefined} />
    </Form>
  );
}

export function AgentsPage() {
  const { api } = useWorkspace();
  const agents = useQuery({ queryKey: useKey('agents'), queryFn: async () => (await api.agents.list({ limit: 100 })).data });
  return (
    <>
      <PageTitle>Agents</PageTitle>
      <NewAgent />
      <QueryView query={agents} isEmpty={(list) => list.length === 0} empty={<Empty title="No agents yet.">Name one above to create it.</Empty>}>
        {(list) => (
          <DataTable caption="Agents" columns={['Name', 'Voice', 'Language', 'Updated']}>
            {list.map((agent) => (
              <tr key={agent.id}>
                <td>
                  <Link href={`/agents/${agent.id}`}>{agent.name}</Link>
                </td>
                <td>{agent.voice}</td>
                <td>{agent.language}</td>
                <td>{new Date(agent.updated_at).toLocaleString()}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryView>
    </>
  );
}
