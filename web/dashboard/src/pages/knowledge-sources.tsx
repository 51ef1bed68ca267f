import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { KnowledgeSource } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, FormError } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { Empty, QueryView } from '../ui/states.tsx';
import { ConfirmDialog } from './confirm-dialog.tsx';
import { SourceChunks } from './knowledge-chunks.tsx';
import { anyProcessing, formatBytes, originOf, sourceTally } from './knowledge-base-view.ts';

// A knowledge base's sources with each one's status, polled while one is being processed; a
// source deleted (after a question) or processed again (a web page fetched again).

/** The sources of a base, polled every second while one is processing. */
export function useSources(baseId: string) {
  const { api } = useWorkspace();
  return useQuery({
    queryKey: useKey('knowledge-sources', baseId),
    queryFn: async () => (await api.knowledgeBases.listSources(baseId, { limit: 100 })).data,
    refetchInterval: (query) => (query.state.data && anyProcessing(query.state.data) ? 1000 : false),
  });
}

function StatusCell({ source }: { source: KnowledgeSource }) {
  return (
    <td>
      <span className={`badge badge-${source.status}`}>
        {source.status === 'processing' ? <span className="spinner" aria-hidden="true" /> : null}
        {source.status}
      </span>
      {source.status === 'failed' && source.error ? <div className="field-error">{source.error}</div> : null}
    </td>
  );
}

function SourceRow({ source, onDelete, onRefresh, onChunks }: { source: KnowledgeSource; onDelete(): void; onRefresh(): void; onChunks(): void }) {
  return (
    <tr data-source={source.id}>
      <td>{source.title}</td>
      <StatusCell source={source} />
      <td>
        <div className="row-actions">
          <Button variant="secondary" onPress={onChunks} aria-label={`Show chunks: ${source.title}`}>
            Show chunks
          </Button>
          <Button variant="secondary" onPress={onRefresh} isDisabled={source.status === 'processing'} aria-label={`Process again: ${source.title}`}>
            Process again
          </Button>
          <Button variant="danger" onPress={onDelete} aria-label={`Delete ${source.title}`}>
            Delete
          </Button>
        </div>
      </td>
      <td>{source.chunk_count}</td>
      <td>{formatBytes(source.bytes)}</td>
      <td className="url">{originOf(source)}</td>
      <td>{dateTime(source.created_at)}</td>
    </tr>
  );
}

function DeleteSourceDialog({ baseId, source, onClose }: { baseId: string; source: KnowledgeSource; onClose(): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api.knowledgeBases.deleteSource(baseId, source.id),
    onSuccess: () => {
      void queryClient.invalidateQueries();
      onClose();
    },
  });
  return (
    <ConfirmDialog title={`Delete “${source.title}”?`} confirmLabel="Delete source" onConfirm={() => remove.mutate()} onClose={onClose} pending={remove.isPending} error={remove.error}>
      <p>Its {source.chunk_count} chunks leave the search results at once. This cannot be undone.</p>
    </ConfirmDialog>
  );
}

export function SourceList({ baseId }: { baseId: string }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const sources = useSources(baseId);
  const sourcesKey = useKey('knowledge-sources', baseId);
  const [deleting, setDeleting] = useState<KnowledgeSource>();
  const [viewing, setViewing] = useState<string>();
  const refresh = useMutation({
    mutationFn: (id: string) => api.knowledgeBases.refreshSource(baseId, id),
    // Shown as processing at once, which also starts the polling that follows it to its end.
    onMutate: (id) => queryClient.setQueryData<KnowledgeSource[]>(sourcesKey, (list) => list?.map((s) => (s.id === id ? { ...s, status: 'processing' } : s))),
    onSettled: () => void queryClient.invalidateQueries(),
  });
  return (
    <>
      <FormError message={refresh.error ? describeError(refresh.error).message : undefined} />
      <QueryView query={sources} isEmpty={(list) => list.length === 0} empty={<Empty title="No sources yet.">Upload a file, add a web page or paste text below.</Empty>} loadingLabel="Loading the sources…">
        {(list) => (
          <>
            <p role="status" className="hint" data-testid="source-tally">
              {sourceTally(list)}
            </p>
            <DataTable caption="Sources" columns={['Title', 'Status', 'Actions', 'Chunks', 'Size', 'From', 'Added']}>
              {list.map((source) => (
                <SourceRow key={source.id} source={source} onDelete={() => setDeleting(source)} onRefresh={() => refresh.mutate(source.id)} onChunks={() => setViewing(source.id)} />
              ))}
            </DataTable>
            {viewing && list.some((s) => s.id === viewing) ? <SourceChunks baseId={baseId} source={list.find((s) => s.id === viewing)!} onClose={() => setViewing(undefined)} /> : null}
          </>
        )}
      </QueryView>
      {deleting ? <DeleteSourceDialog baseId={baseId} source={deleting} onClose={() => setDeleting(undefined)} /> : null}
    </>
  );
}
