import { useQuery } from '@tanstack/react-query';
import type { KnowledgeSource } from '@voice-agent-platform/sdk';
import { useEffect, useRef } from 'react';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button } from '../ui/form.tsx';
import { Empty, QueryView } from '../ui/states.tsx';

// The chunks a source was cut into, in document order: what search can return from it. Opened
// from the source's row; its heading takes the focus.

export function SourceChunks({ baseId, source, onClose }: { baseId: string; source: KnowledgeSource; onClose(): void }) {
  const { api } = useWorkspace();
  const heading = useRef<HTMLHeadingElement>(null);
  const chunks = useQuery({ queryKey: useKey('knowledge-chunks', source.id, source.updated_at), queryFn: async () => await api.knowledgeBases.listChunks(baseId, source.id, { limit: 100 }) });
  useEffect(() => heading.current?.focus(), []);
  return (
    <section className="chunks" aria-labelledby="chunks-heading">
      <div className="result-head">
        <h3 id="chunks-heading" ref={heading} tabIndex={-1}>
          Chunks of “{source.title}”
        </h3>
        <Button variant="secondary" onPress={onClose}>
          Close
        </Button>
      </div>
      <QueryView query={chunks} isEmpty={(page) => page.data.length === 0} empty={<Empty title="This source has no chunks.">{source.status === 'failed' ? 'Its processing failed: see the error in its row.' : null}</Empty>} loadingLabel="Loading the chunks…">
        {(page) => (
          <>
            <ol className="results" aria-label={`Chunks of ${source.title}`}>
              {page.data.map((chunk) => (
                <li key={chunk.id} className="result">
                  <p className="chunk-text">{chunk.text}</p>
                </li>
              ))}
            </ol>
            {page.has_more ? <p className="hint">The first 100 chunks are shown.</p> : null}
          </>
        )}
      </QueryView>
    </section>
  );
}
