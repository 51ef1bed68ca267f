import { useMutation } from '@tanstack/react-query';
import type { KnowledgeSearchResult, KnowledgeSource } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useWorkspace } from '../api/workspace.tsx';
import { Button, Field, Form, FormError } from '../ui/form.tsx';
import { Empty } from '../ui/states.tsx';
import { scoreOf, topKOf } from './knowledge-base-view.ts';

// A test query: what an agent's knowledge search would retrieve for a question, each chunk with
// its source and its score.

function Result({ result, source, rank }: { result: KnowledgeSearchResult; source: KnowledgeSource | undefined; rank: number }) {
  const score = scoreOf(result.score);
  return (
    <li className="result" data-chunk={result.chunk_id}>
      <div className="result-head">
        <strong>
          {rank}. {source?.title ?? result.source_id}
        </strong>
        <span className="score">
          <span className="score-bar" aria-hidden="true">
            <span style={{ width: `${score.percent}%` }} />
          </span>
          Score {score.text}
        </span>
      </div>
      <p className="chunk-text">{result.text}</p>
    </li>
  );
}

export function TestQuery({ baseId, sources }: { baseId: string; sources: KnowledgeSource[] }) {
  const { api } = useWorkspace();
  const [query, setQuery] = useState('');
  const [topK, setTopK] = useState('5');
  const [problems, setProblems] = useState<{ query?: string; top_k?: string }>({});
  const search = useMutation({ mutationFn: (body: { query: string; top_k: number }) => api.knowledgeBases.query(baseId, body) });
  const submit = () => {
    const k = topKOf(topK);
    const found = { query: query.trim() === '' ? 'Ask a question.' : undefined, top_k: k === undefined ? 'A whole number from 1 to 20.' : undefined };
    setProblems(found);
    if (!found.query && k !== undefined) search.mutate({ query: query.trim(), top_k: k });
  };
  const failure = search.error ? describeError(search.error) : undefined;
  const results = search.data?.results;
  return (
    <section className="panel" aria-labelledby="query-heading">
      <h2 id="query-heading">Test a query</h2>
      <p className="hint">Ask as a caller would: the chunks an agent would be given come back, best first.</p>
      <Form label="Test a query" className="form inline" onSubmit={submit}>
        <Field label="Question" name="query" value={query} onChange={setQuery} required error={problems.query ?? failure?.fields.query} />
        <Field label="Results" name="top_k" type="number" min={1} max={20} value={topK} onChange={setTopK} error={problems.top_k ?? failure?.fields.top_k} />
        <Button type="submit" isPending={search.isPending}>
          {search.isPending ? 'Searching…' : 'Search'}
        </Button>
      </Form>
      <FormError message={failure && !failure.fields.query && !failure.fields.top_k ? failure.message : undefined} />
      <div aria-live="polite">
        {results && results.length === 0 ? <Empty title="Nothing matches.">No chunk shares a word with the question; try other words, or add a source that answers it.</Empty> : null}
        {results && results.length > 0 ? (
          <ol className="results" aria-label="Retrieved chunks">
            {results.map((result, index) => (
              <Result key={result.chunk_id} result={result} source={sources.find((s) => s.id === result.source_id)} rank={index + 1} />
            ))}
          </ol>
        ) : null}
      </div>
    </section>
  );
}
