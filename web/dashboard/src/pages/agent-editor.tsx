import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Agent } from '@voice-agent-platform/sdk';
import { useEffect, useState } from 'react';
import { Link } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button, CheckboxField, Field, Form, FormError, SelectField } from '../ui/form.tsx';
import { SecretOnce } from '../ui/secret.tsx';
import { PageTitle } from '../ui/shell.tsx';
import { QueryView } from '../ui/states.tsx';
import { AGENT_EVENTS, type AgentDraft, type DraftErrors, draftField, draftOf, LANGUAGES, updateOf } from './agent-draft.ts';
import { forgetSecret, peekSecret } from './secret-flash.ts';

// One agent's page: its settings (prompt, first message, voice, model, language, end-call
// phrases, limits, webhook), saved with PATCH; its webhook secret shown once after the create or
// a rotation.

type Set = <K extends keyof AgentDraft>(key: K, value: AgentDraft[K]) => void;

function SpeechSection({ draft, set, errors }: { draft: AgentDraft; set: Set; errors: DraftErrors }) {
  const { api } = useWorkspace();
  const voices = useQuery({ queryKey: ['voices'], queryFn: async () => (await api.voices.list()).data, staleTime: Number.POSITIVE_INFINITY });
  const voiceOptions = (voices.data ?? []).map((v) => ({ value: v.id, label: `${v.name} (${v.language}, ${v.gender})` }));
  if (!voiceOptions.some((o) => o.value === draft.voice)) voiceOptions.unshift({ value: draft.voice, label: draft.voice });
  return (
    <fieldset>
      <legend>Conversation</legend>
      <Field label="Name" name="name" value={draft.name} onChange={(v) => set('name', v)} required error={errors.name} />
      <Field label="Prompt" name="prompt" multiline rows={8} value={draft.prompt} onChange={(v) => set('prompt', v)} description="The system prompt; {{variables}} of a call are substituted." error={errors.prompt} />
      <Field label="First message" name="first_message" value={draft.first_message} onChange={(v) => set('first_message', v)} description="What the agent says when the call is answered; empty: it waits for the caller." error={errors.first_message} />
      <SelectField label="Voice" name="voice" value={draft.voice} onChange={(v) => set('voice', v)} options={voiceOptions} error={errors.voice} description={voices.isError ? 'The voices could not be listed.' : undefined} />
      <SelectField label="Language" name="language" value={draft.language} onChange={(v) => set('language', v)} options={LANGUAGES.map((l) => ({ value: l, label: l }))} error={errors.language} />
    </fieldset>
  );
}

function ModelSection({ draft, set, errors }: { draft: AgentDraft; set: Set; errors: DraftErrors }) {
  return (
    <fieldset>
      <legend>Language model and limits</legend>
      <SelectField
        label="LLM provider"
        name="llm_provider"
        value={draft.llm_provider}
        onChange={(v) => set('llm_provider', v as AgentDraft['llm_provider'])}
        options={[
          { value: 'builtin', label: 'Built-in (offline)' },
          { value: 'openai', label: 'OpenAI-compatible' },
        ]}
      />
      <Field label="Model" name="llm_model" value={draft.llm_model} onChange={(v) => set('llm_model', v)} error={errors.llm_model} />
      <Field label="Temperature" name="llm_temperature" type="number" step="any" min={0} max={2} value={draft.llm_temperature} onChange={(v) => set('llm_temperature', v)} error={errors.llm_temperature} />
      <Field label="End-call phrases" name="end_call_phrases" multiline rows={3} value={draft.end_call_phrases} onChange={(v) => set('end_call_phrases', v)} description="One per line: the agent ends the call after saying one." error={errors.end_call_phrases} />
      <Field label="Maximum call length (seconds)" name="max_duration_seconds" type="number" min={1} value={draft.max_duration_seconds} onChange={(v) => set('max_duration_seconds', v)} error={errors.max_duration_seconds} />
      <Field label="Silence before hanging up (seconds)" name="silence_timeout_seconds" type="number" min={1} value={draft.silence_timeout_seconds} onChange={(v) => set('silence_timeout_seconds', v)} error={errors.silence_timeout_seconds} />
    </fieldset>
  );
}

function WebhookSection({ draft, set, errors }: { draft: AgentDraft; set: Set; errors: DraftErrors }) {
  const toggle = (event: string, on: boolean) => set('webhook_events', on ? [...draft.webhook_events, event] : draft.webhook_events.filter((e) => e !== event));
  return (
    <fieldset>
      <legend>Webhook</legend>
      <Field label="Webhook URL" name="webhook_url" type="url" value={draft.webhook_url} onChange={(v) => set('webhook_url', v)} description="Receives this agent's call events, signed with its webhook secret." error={errors.webhook_url} />
      <fieldset className="checks">
        <legend>Events (none checked: all)</legend>
        {AGENT_EVENTS.map((event) => (
          <CheckboxField key={event} label={event} checked={draft.webhook_events.includes(event)} onChange={(on) => toggle(event, on)} />
        ))}
      </fieldset>
    </fieldset>
  );
}

function WebhookSecret({ agent }: { agent: Agent }) {
  const { api } = useWorkspace();
  const [secret, setSecret] = useState(() => peekSecret(agent.id));
  useEffect(() => () => forgetSecret(agent.id), [agent.id]);
  const rotate = useMutation({ mutationFn: () => api.agents.rotateWebhookSecret(agent.id), onSuccess: (answer) => setSecret(answer.webhook_secret) });
  if (secret) return <SecretOnce title="Webhook secret" value={secret} onDismiss={() => setSecret(undefined)} />;
  return (
    <section className="panel" aria-labelledby="secret-heading">
      <h2 id="secret-heading">Webhook secret</h2>
      <p>The secret that signs this agent's webhooks was shown when it was made. A new one replaces it at once.</p>
      <FormError message={rotate.error ? describeError(rotate.error).message : undefined} />
      <Button variant="secondary" onPress={() => rotate.mutate()} isDisabled={rotate.isPending}>
        Rotate webhook secret
      </Button>
    </section>
  );
}

function Editor({ agent }: { agent: Agent }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const agentKey = useKey('agent', agent.id);
  const [draft, setDraft] = useState(() => draftOf(agent));
  const [local, setLocal] = useState<DraftErrors>({});
  const set: Set = (key, value) => setDraft((d) => ({ ...d, [key]: value }));
  const save = useMutation({
    mutationFn: (body: ReturnType<typeof updateOf>['body']) => api.agents.update(agent.id, body),
    onSuccess: (saved) => {
      queryClient.setQueryData(agentKey, saved);
      void queryClient.invalidateQueries({ queryKey: agentKey.slice(0, 1).concat('agents') });
    },
  });
  const failure = save.error ? describeError(save.error) : undefined;
  const errors: DraftErrors = { ...local };
  for (const [path, message] of Object.entries(failure?.fields ?? {})) {
    const field = draftField(path);
    if (field) errors[field] ??= message;
  }
  const submit = () => {
    const { body, errors: found } = updateOf(draft);
    setLocal(found);
    if (Object.keys(found).length === 0) save.mutate(body);
  };
  return (
    <Form label="Agent settings" onSubmit={submit}>
      <SpeechSection draft={draft} set={set} errors={errors} />
      <ModelSection draft={draft} set={set} errors={errors} />
      <WebhookSection draft={draft} set={set} errors={errors} />
      <FormError message={failure?.message} />
      <div className="actions">
        <Button type="submit" isDisabled={save.isPending}>
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
          </div>
        )}
      </QueryView>
    </>
  );
}
