import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, type Branding } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { whiteTextWarning } from '../ui/color.ts';
import { ConfirmAction } from '../ui/confirm-action.tsx';
import { Button, CheckboxField, Field, Form, FormError } from '../ui/form.tsx';
import { PageTitle } from '../ui/shell.tsx';
import { QueryView } from '../ui/states.tsx';
import { type BrandingDraft, type BrandingDraftErrors, brandingDraftField, brandingDraftOf, brandingPutOf } from './branding-draft.ts';
import { BrandingPreview } from './branding-preview.tsx';

// White-label branding (admin): the domain the platform's public pages are served on for this
// workspace, and the name, logo, colours and support links they show there; with a preview.

type Set = <K extends keyof BrandingDraft>(key: K, value: BrandingDraft[K]) => void;

function Fields({ draft, set, errors }: { draft: BrandingDraft; set: Set; errors: BrandingDraftErrors }) {
  return (
    <>
      <fieldset>
        <legend>Brand</legend>
        <Field label="Domain" name="domain" value={draft.domain} onChange={(v) => set('domain', v)} required error={errors.domain} description="The host your customers visit, e.g. voice.example.com (pointed at this platform)." />
        <Field label="Brand name" name="name" value={draft.name} onChange={(v) => set('name', v)} required error={errors.name} />
        <Field label="Logo URL" name="logo_url" type="url" value={draft.logo_url} onChange={(v) => set('logo_url', v)} error={errors.logo_url} />
        <Field label="Favicon URL" name="favicon_url" type="url" value={draft.favicon_url} onChange={(v) => set('favicon_url', v)} error={errors.favicon_url} />
      </fieldset>
      <fieldset>
        <legend>Colours and links</legend>
        <Field label="Primary colour" name="primary_color" value={draft.primary_color} onChange={(v) => set('primary_color', v)} error={errors.primary_color} description={whiteTextWarning(draft.primary_color.trim()) ?? 'Links and the widget launcher, #rrggbb.'} />
        <Field label="Accent colour" name="accent_color" value={draft.accent_color} onChange={(v) => set('accent_color', v)} error={errors.accent_color} description={whiteTextWarning(draft.accent_color.trim()) ?? 'The page header, behind white text, #rrggbb.'} />
        <Field label="Support email" name="support_email" type="email" value={draft.support_email} onChange={(v) => set('support_email', v)} error={errors.support_email} />
        <Field label="Support URL" name="support_url" type="url" value={draft.support_url} onChange={(v) => set('support_url', v)} error={errors.support_url} />
        <CheckboxField label="Hide “Powered by Voice Agent Platform”" name="hide_powered_by" checked={draft.hide_powered_by} onChange={(on) => set('hide_powered_by', on)} />
      </fieldset>
    </>
  );
}

function BrandingForm({ branding }: { branding: Branding | null }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const key = useKey('branding');
  const [draft, setDraft] = useState(() => brandingDraftOf(branding));
  const [local, setLocal] = useState<BrandingDraftErrors>({});
  const [removing, setRemoving] = useState(false);
  const set: Set = (field, value) => setDraft((d) => ({ ...d, [field]: value }));
  const remove = useMutation({
    mutationFn: () => api.branding.delete(),
    onSuccess: () => {
      save.reset();
      setDraft(brandingDraftOf(null));
      queryClient.setQueryData(key, null);
    },
  });
  const save = useMutation({
    mutationFn: (body: ReturnType<typeof brandingPutOf>['body']) => api.branding.put(body),
    onSuccess: (saved) => {
      remove.reset();
      queryClient.setQueryData(key, saved);
    },
  });
  const failure = save.error ? describeError(save.error) : undefined;
  const errors: BrandingDraftErrors = { ...local };
  for (const [path, message] of Object.entries(failure?.fields ?? {})) {
    const field = brandingDraftField(path);
    if (field) errors[field] ??= message;
  }
  const submit = () => {
    const { body, errors: found } = brandingPutOf(draft);
    setLocal(found);
    if (Object.keys(found).length === 0) save.mutate(body);
  };
  return (
    <div className="widget-editor">
      <Form label="Branding" onSubmit={submit}>
        {branding ? null : <p className="hint">No branding yet: public pages show the platform's own look.</p>}
        <Fields draft={draft} set={set} errors={errors} />
        <FormError message={failure?.message} />
        <div className="actions">
          <Button type="submit" isPending={save.isPending}>
            {save.isPending ? 'Saving…' : 'Save branding'}
          </Button>
          {branding ? (
            <Button variant="danger" onPress={() => setRemoving(true)}>
              Remove branding
            </Button>
          ) : null}
          <span role="status" className="hint">
            {remove.isSuccess ? 'Branding removed' : save.isSuccess && !save.isPending ? 'Saved' : ''}
          </span>
        </div>
      </Form>
      <BrandingPreview draft={draft} />
      {removing ? <ConfirmAction title="Remove the branding?" body={`Public pages on ${branding?.domain ?? 'your domain'} show the platform's own look again, and the domain is free.`} confirmLabel="Remove branding" mutation={remove} onClose={() => setRemoving(false)} /> : null}
    </div>
  );
}

export function BrandingPage() {
  const { api } = useWorkspace();
  const branding = useQuery({
    queryKey: useKey('branding'),
    // None set yet is a 404: an empty form, not an error.
    queryFn: () => api.branding.retrieve().catch((error: unknown) => (error instanceof ApiError && error.status === 404 ? null : Promise.reject(error))),
  });
  return (
    <>
      <PageTitle>Branding</PageTitle>
      <QueryView query={branding} loadingLabel="Loading the branding…">
        {(data) => <BrandingForm branding={data} />}
      </QueryView>
    </>
  );
}
