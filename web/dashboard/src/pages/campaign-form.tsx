import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Campaign } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { useLocation } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button, CheckboxField, Field, Form, FormError, SelectField } from '../ui/form.tsx';
import { useAgentOptions } from './agent-options.tsx';
import { type CampaignDraft, type CampaignDraftErrors, campaignCreateOf, campaignDraftField, campaignDraftOf, campaignUpdateOf, newCampaignDraft, WEEKDAYS } from './campaign-draft.ts';

// A campaign's settings, every one the API offers: agent, caller id, concurrency, attempts and
// the delay between them, the calling window, the default country, and (sandbox) what the
// simulated callees say. A new one is created as a draft (its page then takes the contacts); one
// not ended yet is changed with PATCH (concurrency and window apply to the next dial).

type Set = <K extends keyof CampaignDraft>(key: K, value: CampaignDraft[K]) => void;

function DialingSection({ draft, set, errors }: { draft: CampaignDraft; set: Set; errors: CampaignDraftErrors }) {
  const { api } = useWorkspace();
  const agents = useAgentOptions();
  const numbers = useQuery({ queryKey: useKey('phone-numbers'), queryFn: async () => (await api.phoneNumbers.list({ limit: 100 })).data });
  const numberOptions = [{ value: '', label: 'None: the sandbox caller id' }, ...(numbers.data ?? []).map((n) => ({ value: n.number, label: n.label ? `${n.number} (${n.label})` : n.number }))];
  return (
    <fieldset>
      <legend>Who calls</legend>
      <Field label="Campaign name" name="name" value={draft.name} onChange={(v) => set('name', v)} required error={errors.name} />
      <SelectField label="Agent" name="agent_id" value={draft.agent_id} onChange={(v) => set('agent_id', v)} options={agents.options} error={errors.agent_id} description={agents.agents.isError ? 'The agents could not be listed.' : undefined} />
      <SelectField label="From number" name="from_number" value={draft.from_number} onChange={(v) => set('from_number', v)} options={numberOptions} error={errors.from_number} description="The caller id: one of the workspace's phone numbers (a real provider needs one)." />
      <Field label="Default country" name="default_country" value={draft.default_country} onChange={(v) => set('default_country', v)} error={errors.default_country} description="Two letters (e.g. US) for numbers written without +country code." />
    </fieldset>
  );
}

function PaceSection({ draft, set, errors }: { draft: CampaignDraft; set: Set; errors: CampaignDraftErrors }) {
  return (
    <fieldset>
      <legend>Pace and retries</legend>
      <Field label="Concurrency" name="concurrency" type="number" min={1} max={50} value={draft.concurrency} onChange={(v) => set('concurrency', v)} error={errors.concurrency} description="Live calls at most (1 to 50)." />
      <Field label="Attempts per contact" name="max_attempts" type="number" min={1} max={10} value={draft.max_attempts} onChange={(v) => set('max_attempts', v)} error={errors.max_attempts} description="Busy and unanswered numbers are tried again, up to this many times." />
      <Field label="Minutes between attempts" name="retry_delay_minutes" type="number" min={0} value={draft.retry_delay_minutes} onChange={(v) => set('retry_delay_minutes', v)} error={errors.retry_delay_minutes} />
    </fieldset>
  );
}

function WindowSection({ draft, set, errors }: { draft: CampaignDraft; set: Set; errors: CampaignDraftErrors }) {
  const toggle = (day: CampaignDraft['window_days'][number], on: boolean) => set('window_days', on ? [...draft.window_days, day] : draft.window_days.filter((d) => d !== day));
  return (
    <fieldset>
      <legend>Calling window</legend>
      <CheckboxField label="Call only at set hours" name="window_enabled" checked={draft.window_enabled} onChange={(on) => set('window_enabled', on)} />
      {draft.window_enabled ? (
        <>
          <fieldset className="checks" aria-describedby={errors.window_days ? 'window-days-error' : undefined}>
            <legend>Days</legend>
            {WEEKDAYS.map((day) => (
              <CheckboxField key={day.value} label={day.label} checked={draft.window_days.includes(day.value)} onChange={(on) => toggle(day.value, on)} />
            ))}
            {errors.window_days ? <span id="window-days-error" className="field-error">{errors.window_days}</span> : null}
          </fieldset>
          <Field label="From (HH:MM)" name="window_start" value={draft.window_start} onChange={(v) => set('window_start', v)} error={errors.window_start} />
          <Field label="Until (HH:MM)" name="window_end" value={draft.window_end} onChange={(v) => set('window_end', v)} error={errors.window_end} description="Before the start: the window runs past midnight." />
          <Field label="Time zone" name="window_timezone" value={draft.window_timezone} onChange={(v) => set('window_timezone', v)} error={errors.window_timezone} description="For contacts without a timezone column, e.g. Europe/Paris." />
        </>
      ) : (
        <p className="hint">Contacts are called at any hour.</p>
      )}
    </fieldset>
  );
}

/** The new campaign's form (no `campaign`), or the form changing `campaign`'s settings. */
export function CampaignForm({ campaign, onDone }: { campaign?: Campaign; onDone?: () => void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [draft, setDraft] = useState(() => (campaign ? campaignDraftOf(campaign) : newCampaignDraft(Intl.DateTimeFormat().resolvedOptions().timeZone)));
  const [local, setLocal] = useState<CampaignDraftErrors>({});
  const set: Set = (key, value) => setDraft((d) => ({ ...d, [key]: value }));
  const save = useMutation({
    mutationFn: async () => {
      // Checked here: the form's own errors and the platform's show alike.
      const { body, errors: found } = campaign ? campaignUpdateOf(draft, campaign) : campaignCreateOf(draft);
      setLocal(found);
      if (Object.keys(found).length > 0) return undefined;
      return campaign ? await api.campaigns.update(campaign.id, body) : await api.campaigns.create(campaignCreateOf(draft).body);
    },
    onSuccess: (saved) => {
      if (!saved) return;
      void queryClient.invalidateQueries();
      if (campaign) onDone?.();
      else navigate(`/campaigns/${saved.id}`);
    },
  });
  const failure = save.error ? describeError(save.error) : undefined;
  const errors: CampaignDraftErrors = { ...local };
  for (const [path, message] of Object.entries(failure?.fields ?? {})) {
    const field = campaignDraftField(path);
    if (field) errors[field] ??= message;
  }
  return (
    <Form label={campaign ? 'Campaign settings' : 'New campaign'} onSubmit={() => save.mutate()}>
      <DialingSection draft={draft} set={set} errors={errors} />
      <PaceSection draft={draft} set={set} errors={errors} />
      <WindowSection draft={draft} set={set} errors={errors} />
      <fieldset>
        <legend>Sandbox test</legend>
        <Field label="What each callee says" name="caller_script" multiline rows={3} value={draft.caller_script} onChange={(v) => set('caller_script', v)} error={errors.caller_script} description="Sandbox only: one line per turn of the simulated callee. Empty: the callee stays silent." />
      </fieldset>
      <FormError message={failure?.message} />
      <div className="actions">
        <Button type="submit" isPending={save.isPending}>
          {save.isPending ? 'Saving…' : campaign ? 'Save settings' : 'Create campaign'}
        </Button>
        {campaign ? (
          <Button variant="secondary" onPress={() => onDone?.()}>
            Discard changes
          </Button>
        ) : null}
      </div>
    </Form>
  );
}
