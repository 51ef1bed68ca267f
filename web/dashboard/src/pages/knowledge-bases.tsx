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
import { KB_LANGUAGES } from './knowledge-base-view.ts';

// The workspace's knowledge bases, and a new one (named here, filled on its own page).

function NewKnowledgeBase() {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [language, setLanguage] = useState('en');
  const create = useMutation({
    mutationFn: () => api.knowledgeBases.create({ name: name.trim(), description: description.trim() || null, language }),
    onSuccess: (base) => {
      void queryClient.invalidateQueries();
      navigate(`/knowledge-bases/${base.id}`);
    },
  });
  const failure = create.error ? describeError(create.error) : undefined;
  const fieldFailure = failure && (failure.fields.name || failure.fields.description || failure.fields.language);
  return (
    <Form label="New knowledge base" className="form inline" onSubmit={() => create.mutate()}>
      <Field label="New knowledge base's name" name="name" value={name} onChange={setName} required error={failure?.fields.name} />
      <Field label="Description" name="description" value={description} onChange={setDescription} error={failure?.fields.description} />
      <SelectField label="Language of the documents" name="language" value={language} onChange={setLanguage} options={KB_LANGUAGES} error={failure?.fields.language} />
      <Button type="submit" isDisabled={name.trim() === ''} isPending={create.isPending}>
        Create knowledge base
      </Button>
      <FormError message={failure && !fieldFailure ? failure.message : undefined} />
    </Form>
  );
}

export function KnowledgeBasesPage() {
  const { api } = useWorkspace();
  const bases = useQuery({ queryKey: useKey('knowledge-bases'), queryFn: async () => (await api.knowledgeBases.list({ limit: 100 })).data });
  return (
    <>
      <PageTitle>Knowledge bases</PageTitle>
      <NewKnowledgeBase />
      <QueryView query={bases} isEmpty={(list) => list.length === 0} empty={<Empty title="No knowledge bases yet.">Name one above, then add documents, web pages or text to it; agents answer from it.</Empty>} loadingLabel="Loading the knowledge bases…">
        {(list) => (
          <DataTable caption="Knowledge bases" columns={['Name', 'Status', 'Sources', 'Chunks', 'Updated']}>
            {list.map((base) => (
              <tr key={base.id}>
                <td>
                  <Link href={`/knowledge-bases/${base.id}`}>{base.name}</Link>
                  {base.description ? <div className="hint">{base.description}</div> : null}
                </td>
                <td>
                  <span className={`badge badge-${base.status}`}>{base.status}</span>
                </td>
                <td>{base.source_count}</td>
                <td>{base.chunk_count}</td>
                <td>{dateTime(base.updated_at)}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryView>
    </>
  );
}
