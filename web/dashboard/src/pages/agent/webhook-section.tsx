import { useMutation } from '@tanstack/react-query';
import type { Agent } from '@voice-agent-platform/sdk';
import { useEffect, useState } from 'react';
import { describeError } from '../../api/errors.ts';
import { useWorkspace } from '../../api/workspace.tsx';
import { Button, CheckboxField, Field, FormError } from '../../ui/form.tsx';
import { SecretOnce } from '../../ui/secret.tsx';
import { AGENT_EVENTS } from '../agent-draft.ts';
import { forgetSecret, peekSecret } from '../secret-flash.ts';
import { parseArguments } from './json-text.ts';
import type { SectionProps } from './section-props.ts';

// The agent's webhook: the URL and events it receives, a test event, its signing secret (shown
// once after the create or a rotation); and the agent's free-form metadata.

/** Sends a webhook.test event to the saved webhook URL (POST /v1/agents/{id}/webhook/test). */
function WebhookTest({ agentId, savedUrl }: { agentId: string; savedUrl: string | null }) {
  const { api } = useWorkspace();
  const test = useMutation({ mutationFn: () => api.agents.testWebhook(agentId, {}) });
  return (
    <div className="actions">
      <Button variant="secondary" onPress={() => test.mutate()} isDisabled={!savedUrl} isPending={test.isPending}>
        Send test event
      </Button>
      <span role="status" className="hint">
        {test.data ? `Test event queued (${test.data.event_id})` : savedUrl ? '' : 'Save a webhook URL to send a test event.'}
      </span>
      <FormError message={test.error ? describeError(test.error).message : undefined} />
    </div>
  );
}

export function WebhookSection({ draft, set, errors, agentId, savedUrl }: SectionProps & { agentId: string; savedUrl: string | null }) {
  const toggle = (event: string, on: boolean) => set('webhook_events', on ? [...draft.webhook_events, event] : draft.webhook_events.filter((e) => e !== event));
  return (
    <fieldset>
      <legend>Webhook and metadata</legend>
      <Field label="Webhook URL" name="webhook_url" type="url" value={draft.webhook_url} onChange={(v) => set('webhook_url', v)} description="Receives this agent's call events, signed with its webhook secret." error={errors.webhook_url} />
      <fieldset className="checks">
        <legend>Events (none checked: all)</legend>
        {AGENT_EVENTS.map((event) => (
          <CheckboxField key={event} label={event} checked={draft.webhook_events.includes(event)} onChange={(on) => toggle(event, on)} />
        ))}
      </fieldset>
      {errors.webhook_events ? <p className="field-error">{errors.webhook_events}</p> : null}
      <WebhookTest agentId={agentId} savedUrl={savedUrl} />
      <Field label="Metadata (JSON)" name="metadata" multiline rows={3} value={draft.metadata} onChange={(v) => set('metadata', v)} description='Free-form key/value data kept with the agent, such as {"team": "sales"}.' error={parseArguments(draft.metadata).error ?? errors.metadata} />
    </fieldset>
  );
}

export function WebhookSecret({ agent }: { agent: Agent }) {
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
      <Button variant="secondary" onPress={() => rotate.mutate()} isPending={rotate.isPending}>
        Rotate webhook secret
      </Button>
    </section>
  );
}
