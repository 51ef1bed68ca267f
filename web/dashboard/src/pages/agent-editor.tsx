import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Agent } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Link } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button, Form, FormError } from '../ui/form.tsx';
import { PageTitle } from '../ui/shell.tsx';
import { QueryView } from '../ui/states.tsx';
import { type DraftErrors, draftField, draftOf, updateOf } from './agent-draft.ts';
import { KnowledgeSection, TransferSection } from './agent/calling-section.tsx';
import { ExtractionSection } from './agent/extraction-section.tsx';
import { FunctionsSection } from './agent/functions-section.tsx';
import { LimitsSection, ModelSection } from './agent/model-section.tsx';
import type { SetDraft } from './agent/section-props.ts';
import { SpeechSection } from './agent/speech-section.tsx';
import { TestPanel } from './agent/test-panel.tsx';
import { WebhookSecret, WebhookSection } from './agent/webhook-section.tsx';

// One agent's page: every setting (speech, model, limits, transfer and voicemail, knowledge,
// functions, extraction, webhook), saved with one PATCH; its webhook secret shown once after the
// create or a rotation; and a panel to test the saved agent by chat or sandbox call.

/** The form's own errors, then the platform's refusal mapped onto the fields. */
function errorsOf(local: DraftErrors, failure: ReturnType<typeof describeError> | undefined): DraftErrors {
  const errors: DraftErrors = { ...local };
  for (const [path, message] of Object.entries(failure?.fields ?? {})) {
    const field = draftField(path);
    if (field) errors[field] ??= message;
  }
  return errors;
}

function Editor({ agent }: { agent: Agent }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const agentKey = useKey('agent', agent.id);
  const [draft, setDraft] = useState(() => draftOf(agent));
  const [local, setLocal] = useState<DraftErrors>({});
  const set: SetDraft = (key, value) => {
    setDraft((d) => ({ ...d, [key]: value }));
    // A field edited is checked again on the next save (a function's schema, as it is typed).
    setLocal((found) => Object.fromEntries(Object.entries(found).filter(([path]) => path !== key && !path.startsWith(`${key}.`))));
  };
  const save = useMutation({
    mutationFn: (body: ReturnType<typeof updateOf>['body']) => api.agents.update(agent.id, body),
    onSuccess: (saved) => {
      // The platform writes the transfer number in E.164: show it as saved.
      setDraft((d) => ({ ...d, transfer_number: saved.transfer_number ?? '' }));
      queryClient.setQueryData(agentKey, saved);
      void queryClient.invalidateQueries({ queryKey: agentKey.slice(0, 1).concat('agents') });
    },
  });
  const failure = save.error ? describeError(save.error) : undefined;
  const errors = errorsOf(local, failure);
  const submit = () => {
    const { body, errors: found } = updateOf(draft);
    setLocal(found);
    if (Object.keys(found).length === 0) save.mutate(body);
    else save.reset();
  };
  const problems = Object.keys(errors).length;
  const sections = { draft, set, errors };
  return (
    <Form label="Agent settings" onSubmit={submit}>
      <SpeechSection {...sections} />
      <ModelSection {...sections} />
      <LimitsSection {...sections} />
      <TransferSection {...sections} />
      <KnowledgeSection {...sections} />
      <FunctionsSection {...sections} agentId={agent.id} saved={agent.functions} />
      <ExtractionSection {...sections} />
      <WebhookSection {...sections} agentId={agent.id} savedUrl={agent.webhook_url} />
      <FormError message={failure?.message ?? (problems > 0 ? `Fix the ${problems === 1 ? 'field' : `${problems} fields`} marked above, then save.` : undefined)} />
      <div className="actions">
        <Button type="submit" isPending={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save agent'}
        </Button>
        <span role="status" className="hint">
          {save.isSuccess && !save.isPending ? 'Saved' : ''}
        </span>
      </div>
    </Form>
  );
}

export function AgentEditorPage({ id }: { id: string }) {
  const { api } = useWorkspace();
  const agent = useQuery({ queryKey: useKey('agent', id), queryFn: () => api.agents.retrieve(id) });
  return (
    <>
      <PageTitle actions={<Link href="/agents">All agents</Link>}>{agent.data?.name ?? 'Agent'}</PageTitle>
      <QueryView query={agent} loadingLabel="Loading the agent…">
        {(data) => (
          <div className="stack">
            <WebhookSecret agent={data} />
            <Editor key={data.id} agent={data} />
            <TestPanel agentId={data.id} />
          </div>
        )}
      </QueryView>
    </>
  );
}
