import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, Field, Form, FormError, SelectField } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';
import { useAgentOptions } from './agent-options.tsx';
import { WIDGET_MODES } from './widget-draft.ts';

// The workspace's widgets (an agent embedded in web pages), and a new one: named and given its
// agent here, styled in its editor.

function NewWidget() {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const agents = useAgentOptions();
  const [name, setName] = useState('');
  const [agentId, setAgentId] = useState('');
  const create = useMutation({
    mutationFn: () => api.widgets.create({ name: name.trim(), agent_id: agentId }),
    onSuccess: (widget) => {
      void queryClient.invalidateQueries();
      navigate(`/widgets/${widget.id}`);
    },
  });
  const failure = create.error ? describeError(create.error) : undefined;
  return (
    <Form label="New widget" className="form inline" onSubmit={() => create.mutate()}>
      <Field label="New widget's name" name="name" value={name} onChange={setName} required error={failure?.fields.name} />
      <SelectField label="Agent" name="agent_id" value={agentId} onChange={setAgentId} options={agents.options} error={failure?.fields.agent_id} />
      <Button type="submit" isDisabled={name.trim() === '' || agentId === ''} isPending={create.isPending}>
        Create widget
      </Button>
      <FormError message={failure && !failure.fields.name && !failure.fields.agent_id ? failure.message : undefined} />
    </Form>
  );
}

export function WidgetsPage() {
  const { api } = useWorkspace();
  const { nameOf } = useAgentOptions();
  const widgets = useQuery({ queryKey: useKey('widgets'), queryFn: async () => (await api.widgets.list({ limit: 100 })).data });
  const modeLabel = (mode: string) => WIDGET_MODES.find((m) => m.value === mode)?.label ?? mode;
  return (
    <>
      <PageTitle>Widgets</PageTitle>
      <NewWidget />
      <QueryView query={widgets} isEmpty={(list) => list.length === 0} empty={<Empty title="No widgets yet.">A widget puts an agent on your website with one script tag.</Empty>}>
        {(list) => (
          <DataTable caption="Widgets" columns={['Name', 'Agent', 'Mode', 'Origins', 'Updated']}>
            {list.map((widget) => (
              <tr key={widget.id}>
                <td>
                  <Link href={`/widgets/${widget.id}`}>{widget.name}</Link>
                </td>
                <td>{nameOf(widget.agent_id)}</td>
                <td>{modeLabel(widget.mode)}</td>
                <td>{widget.allowed_origins.length === 0 ? 'Any' : widget.allowed_origins.join(', ')}</td>
                <td>{dateTime(widget.updated_at)}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryView>
    </>
  );
}
