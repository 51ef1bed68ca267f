import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, type TenantWebhook, type WebhookEventType } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button, CheckboxField, Field, Form, FormError } from '../ui/form.tsx';
import { SecretOnce } from '../ui/secret.tsx';
import { QueryView } from '../ui/states.tsx';
import { subscribable, type TenantEvent } from './webhook-events.ts';

// Settings > Webhooks, the workspace's own endpoint: its URL and the events it receives (the
// platform's list of event types; a new endpoint starts with the platform's defaults), a secret
// shown once on save or rotation, and a test event.

function EventChoice({ types, chosen, set, error }: { types: WebhookEventType[]; chosen: string[]; set(next: string[]): void; error?: string }) {
  const toggle = (event: string, on: boolean) => set(on ? [...chosen, event] : chosen.filter((e) => e !== event));
  return (
    <>
      <fieldset className="checks" aria-describedby={error ? 'endpoint-events-error' : undefined}>
        <legend>Events sent to the endpoint</legend>
        {subscribable(types).all.map((event) => (
          <CheckboxField key={event} label={event} name="events" checked={chosen.includes(event)} onChange={(on) => toggle(event, on)} />
        ))}
      </fieldset>
      {error ? (
        <p id="endpoint-events-error" className="field-error">
          {error}
        </p>
      ) : null}
    </>
  );
}

function EndpointForm({ webhook, types, onSaved }: { webhook: TenantWebhook | null; types: WebhookEventType[]; onSaved(secret: string): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState(webhook?.webhook_url ?? '');
  const [events, setEvents] = useState<string[]>(webhook?.events ?? subscribable(types).defaults);
  const [noEvent, setNoEvent] = useState(false);
  const after = () => void queryClient.invalidateQueries();
  const done = (secret: string) => {
    onSaved(secret);
    after();
  };
  const save = useMutation({ mutationFn: () => api.webhooks.put({ webhook_url: url, events: events as TenantEvent[] }), onSuccess: (answer) => done(answer.webhook_secret) });
  const rotate = useMutation({ mutationFn: () => api.webhooks.rotateSecret({}), onSuccess: (answer) => done(answer.webhook_secret) });
  const test = useMutation({ mutationFn: () => api.webhooks.test({}), onSuccess: after });
  const submit = () => {
    setNoEvent(events.length === 0);
    if (events.length > 0) save.mutate();
  };
  const failure = [save, rotate, test].map((m) => m.error).find(Boolean);
  const described = failure ? describeError(failure) : undefined;
  return (
    <Form label="Workspace endpoint" className="form" onSubmit={submit}>
      <Field label="Endpoint URL" name="webhook_url" type="url" value={url} onChange={setUrl} required error={described?.fields.webhook_url} description={webhook ? undefined : 'No endpoint yet: workspace events are not sent.'} />
      <EventChoice types={types} chosen={events} set={setEvents} error={noEvent && events.length === 0 ? 'Choose at least one event.' : described?.fields.events} />
      <div className="actions">
        <Button type="submit" isPending={save.isPending}>
          Save endpoint
        </Button>
        {webhook ? (
          <>
            <Button variant="secondary" onPress={() => rotate.mutate()} isPending={rotate.isPending}>
              Rotate secret
            </Button>
            <Button variant="secondary" onPress={() => test.mutate()} isPending={test.isPending}>
              Send test event
            </Button>
          </>
        ) : null}
        <span role="status" className="hint">
          {test.isSuccess ? 'Test event queued' : save.isSuccess ? 'Endpoint saved' : ''}
        </span>
      </div>
      <FormError message={described && !described.fields.webhook_url && !described.fields.events ? described.message : undefined} />
    </Form>
  );
}

export function Endpoint() {
  const { api } = useWorkspace();
  const current = useQuery({
    queryKey: useKey('tenant-webhook'),
    queryFn: async () => {
      // No endpoint yet is a 404: the empty state, not an error.
      const [webhook, types] = await Promise.all([
        api.webhooks.retrieve().catch((error: unknown) => (error instanceof ApiError && error.status === 404 ? null : Promise.reject(error))),
        api.webhooks.listEventTypes(),
      ]);
      return { webhook, types: types.data };
    },
  });
  const [secret, setSecret] = useState<string>();
  return (
    <section className="panel" aria-labelledby="endpoint-heading">
      <h2 id="endpoint-heading">Workspace endpoint</h2>
      {secret ? <SecretOnce title="Webhook signing secret" value={secret} onDismiss={() => setSecret(undefined)} /> : null}
      <QueryView query={current}>{({ webhook, types }) => <EndpointForm webhook={webhook} types={types} onSaved={setSecret} />}</QueryView>
    </section>
  );
}
