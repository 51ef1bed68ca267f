import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { KnowledgeBase } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { QueryView } from '../ui/states.tsx';
import { ConfirmDialog } from './confirm-dialog.tsx';
import { AddSource } from './knowledge-add-source.tsx';
import { anyProcessing, KB_LANGUAGES } from './knowledge-base-view.ts';
import { TestQuery } from './knowledge-query.tsx';
import { SourceList, useSources } from './knowledge-sources.tsx';

// One knowledge base: its figures, its sources (each one's status followed until it is ready or
// failed), a new source (file, web page, text), a test query, and deleting the whole base.

function Facts({ base }: { base: KnowledgeBase }) {
  const language = KB_LANGUAGES.find((l) => l.value === base.language)?.label ?? base.language;
  const rows: [string, string][] = [
    ['Status', base.status],
    ['Sources', String(base.source_count)],
    ['Chunks', String(base.chunk_count)],
    ['Language', language],
    ['Updated', dateTime(base.updated_at)],
  ];
  return (
    <dl className="facts">
      {rows.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd data-field={name}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function DeleteBase({ base }: { base: KnowledgeBase }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [asking, setAsking] = useState(false);
  const remove = useMutation({
    mutationFn: () => api.knowledgeBases.delete(base.id),
    onSuccess: () => {
      void queryClient.invalidateQueries();
      navigate('/knowledge-bases');
    },
  });
  return (
    <>
      <Button variant="danger" onPress={() => setAsking(true)}>
        Delete knowledge base
      </Button>
      {asking ? (
        <ConfirmDialog title={`Delete “${base.name}”?`} confirmLabel="Delete knowledge base" onConfirm={() => remove.mutate()} onClose={() => setAsking(false)} pending={remove.isPending} error={remove.error}>
          <p>Its sources and chunks are deleted, and agents using it no longer find them. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

function Sections({ base }: { base: KnowledgeBase }) {
  const sources = useSources(base.id);
  return (
    <div className="stack">
      <section className="panel" aria-labelledby="kb-summary-heading">
        <h2 id="kb-summary-heading">Summary</h2>
        {base.description ? <p>{base.description}</p> : null}
        <Facts base={base} />
      </section>
      <section className="panel" aria-labelledby="sources-heading">
        <h2 id="sources-heading">Sources</h2>
        <SourceList baseId={base.id} />
      </section>
      <AddSource baseId={base.id} />
      <TestQuery baseId={base.id} sources={sources.data ?? []} />
      <section className="panel" aria-labelledby="danger-heading">
        <h2 id="danger-heading">Delete</h2>
        <DeleteBase base={base} />
      </section>
    </div>
  );
}

export function KnowledgeBasePage({ id }: { id: string }) {
  const { api } = useWorkspace();
  const sources = useSources(id);
  const processing = anyProcessing(sources.data ?? []);
  // The figures follow the sources: polled while the base or one of its sources is processing.
  const base = useQuery({
    queryKey: useKey('knowledge-base', id),
    queryFn: () => api.knowledgeBases.retrieve(id),
    refetchInterval: (query) => (processing || query.state.data?.status === 'processing' ? 1000 : false),
  });
  return (
    <>
      <PageTitle actions={<Link href="/knowledge-bases">All knowledge bases</Link>}>{base.data?.name ?? 'Knowledge base'}</PageTitle>
      <QueryView query={base} loadingLabel="Loading the knowledge base…">
        {(data) => <Sections base={data} />}
      </QueryView>
    </>
  );
}
