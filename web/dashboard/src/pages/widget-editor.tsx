import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Widget } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { whiteTextWarning } from '../ui/color.ts';
import { ConfirmAction } from '../ui/confirm-action.tsx';
import { Button, Field, Form, FormError, SelectField } from '../ui/form.tsx';
import { CopyButton } from '../ui/secret.tsx';
import { PageTitle } from '../ui/shell.tsx';
import { QueryView } from '../ui/states.tsx';
import { useAgentOptions } from './agent-options.tsx';
import { greetingShown, WIDGET_MODES, WIDGET_POSITIONS, type WidgetDraft, type WidgetDraftErrors, widgetDraftField, widgetDraftOf, widgetUpdateOf } from './widget-draft.ts';
import { WidgetPreview } from './widget-preview.tsx';

// One widget: every field (name, agent, mode, title, greeting, colour, corner, allowed origins)
// beside a live preview of the draft, saved with PATCH; the embed tag with a copy button; delete.

type Set = <K extends keyof WidgetDraft>(key: K, value: WidgetDraft[K]) => void;

function ColorField({ value, onChange, error }: { value: string; onChange(value: string): void; error?: string }) {
  const warning = whiteTextWarning(value.trim());
  return (
    <div className="color-field">
      <Field label="Colour" name="primary_color" value={value} onChange={onChange} error={error} description={warning ?? 'Hex #rrggbb: the launcher, the panel header and the visitor’s messages.'} />
      <label className="color-swatch">
        <span className="visually-hidden">Pick the colour</span>
        <input type="color" value={/^#[0-9a-fA-F]{6}$/.test(value) ? value : '#000000'} onChange={(event) => onChange(event.target.value)} />
      </label>
    </div>
  );
}

function Fields({ draft, set, errors }: { draft: WidgetDraft; set: Set; errors: WidgetDraftErrors }) {
  const agents = useAgentOptions();
  return (
    <>
      <fieldset>
        <legend>Widget</legend>
        <Field label="Name" name="name" value={draft.name} onChange={(v) => set('name', v)} required error={errors.name} />
        <SelectField label="Agent" name="agent_id" value={draft.agent_id} onChange={(v) => set('agent_id', v)} options={agents.options} error={errors.agent_id} />
        <SelectField label="Mode" name="mode" value={draft.mode} onChange={(v) => set('mode', v as WidgetDraft['mode'])} options={[...WIDGET_MODES]} error={errors.mode} />
        <Field label="Allowed origins" name="allowed_origins" multiline rows={3} value={draft.allowed_origins} onChange={(v) => set('allowed_origins', v)} error={errors.allowed_origins} description="One per line, e.g. https://www.example.com. Empty: any site may use the widget." />
      </fieldset>
      <fieldset>
        <legend>Look</legend>
        <Field label="Title" name="title" value={draft.title} onChange={(v) => set('title', v)} required error={errors.title} />
        <Field label="Greeting" name="greeting" multiline rows={2} value={draft.greeting} onChange={(v) => set('greeting', v)} error={errors.greeting} description="Empty: the agent's first message." />
        <ColorField value={draft.primary_color} onChange={(v) => set('primary_color', v)} error={errors.primary_color} />
        <SelectField label="Corner" name="position" value={draft.position} onChange={(v) => set('position', v as WidgetDraft['position'])} options={[...WIDGET_POSITIONS]} error={errors.position} />
      </fieldset>
    </>
  );
}

function Editor({ widget }: { widget: Widget }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const widgetKey = useKey('widget', widget.id);
  const { agents } = useAgentOptions();
  const [draft, setDraft] = useState(() => widgetDraftOf(widget));
  const [local, setLocal] = useState<WidgetDraftErrors>({});
  const set: Set = (key, value) => setDraft((d) => ({ ...d, [key]: value }));
  const save = useMutation({
    mutationFn: (body: ReturnType<typeof widgetUpdateOf>['body']) => api.widgets.update(widget.id, body),
    onSuccess: (saved) => {
      queryClient.setQueryData(widgetKey, saved);
      void queryClient.invalidateQueries({ queryKey: widgetKey.slice(0, 1).concat('widgets') });
    },
  });
  const failure = save.error ? describeError(save.error) : undefined;
  const errors: WidgetDraftErrors = { ...local };
  for (const [path, message] of Object.entries(failure?.fields ?? {})) {
    const field = widgetDraftField(path);
    if (field) errors[field] ??= message;
  }
  const submit = () => {
    const { body, errors: found } = widgetUpdateOf(draft);
    setLocal(found);
    if (Object.keys(found).length === 0) save.mutate(body);
  };
  const agent = agents.data?.find((a) => a.id === draft.agent_id);
  return (
    <div className="widget-editor">
      <Form label="Widget settings" onSubmit={submit}>
        <Fields draft={draft} set={set} errors={errors} />
        <FormError message={failure?.message} />
        <div className="actions">
          <Button type="submit" isPending={save.isPending}>
            {save.isPending ? 'Saving…' : 'Save widget'}
          </Button>
          <span role="status" className="hint">
            {save.isSuccess && !save.isPending ? 'Saved' : ''}
          </span>
        </div>
      </Form>
      <WidgetPreview draft={draft} greeting={greetingShown(draft, agent)} />
    </div>
  );
}

function Embed({ widget }: { widget: Widget }) {
  return (
    <section className="panel" aria-labelledby="embed-heading">
      <h2 id="embed-heading">Embed</h2>
      <p>Paste this tag into your pages, before &lt;/body&gt;:</p>
      <div className="secret-row">
        <code data-testid="embed-code">{widget.embed_code}</code>
        <CopyButton text={widget.embed_code} label="Copy embed tag" />
      </div>
      <p>
        <a href={`/v1/widgets/${widget.id}/preview`} target="_blank" rel="noreferrer">
          Try the saved widget on a test page (opens a new tab)
        </a>
      </p>
    </section>
  );
}

function DeleteWidget({ widget }: { widget: Widget }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [asking, setAsking] = useState(false);
  const remove = useMutation({
    mutationFn: () => api.widgets.delete(widget.id),
    onSuccess: () => {
      void queryClient.invalidateQueries();
      navigate('/widgets');
    },
  });
  return (
    <>
      <Button variant="danger" onPress={() => setAsking(true)}>
        Delete widget
      </Button>
      {asking ? <ConfirmAction title={`Delete “${widget.name}”?`} body="Its script stops working on every page that embeds it." confirmLabel="Delete widget" mutation={remove} onClose={() => setAsking(false)} /> : null}
    </>
  );
}

export function WidgetEditorPage({ id }: { id: string }) {
  const { api } = useWorkspace();
  const widget = useQuery({ queryKey: useKey('widget', id), queryFn: () => api.widgets.retrieve(id) });
  return (
    <>
      <PageTitle actions={<Link href="/widgets">All widgets</Link>}>{widget.data?.name ?? 'Widget'}</PageTitle>
      <QueryView query={widget} loadingLabel="Loading the widget…">
        {(data) => (
          <div className="stack">
            <Embed widget={data} />
            <Editor key={data.id} widget={data} />
            <div className="actions">
              <DeleteWidget widget={data} />
            </div>
          </div>
        )}
      </QueryView>
    </>
  );
}
