import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Schedule } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useWorkspace } from '../api/workspace.tsx';
import { Button, Field, Form, FormError, SelectField } from '../ui/form.tsx';
import { useAgentOptions } from './agent-options.tsx';
import { newScheduleDraft, type ScheduleDraft, type ScheduleDraftErrors, scheduleCreateOf, scheduleDraftField, scheduleDraftOf, scheduleUpdateOf } from './schedule-draft.ts';

// A scheduled call, new or changed: agent, number, caller id, time (in the browser's time zone),
// variables and (sandbox) what the callee says.

type Set = <K extends keyof ScheduleDraft>(key: K, value: ScheduleDraft[K]) => void;

/** A date and time input (the browser's own picker), labelled, with its error. */
function WhenField({ value, onChange, error }: { value: string; onChange(value: string): void; error?: string }) {
  return (
    <div className="field">
      <label htmlFor="schedule-when">When (your time zone)</label>
      <input id="schedule-when" name="when" type="datetime-local" value={value} onChange={(event) => onChange(event.target.value)} aria-invalid={error ? true : undefined} aria-describedby={error ? 'schedule-when-error' : undefined} required />
      {error ? <span id="schedule-when-error" className="field-error">{error}</span> : null}
    </div>
  );
}

function Fields({ draft, set, errors }: { draft: ScheduleDraft; set: Set; errors: ScheduleDraftErrors }) {
  const agents = useAgentOptions();
  return (
    <>
      <SelectField label="Agent" name="agent_id" value={draft.agent_id} onChange={(v) => set('agent_id', v)} options={agents.options} error={errors.agent_id} />
      <Field label="Number to call" name="to" type="tel" value={draft.to} onChange={(v) => set('to', v)} required error={errors.to} description="E.164, e.g. +15550100200" />
      <Field label="From number (optional)" name="from" type="tel" value={draft.from} onChange={(v) => set('from', v)} error={errors.from} description="One of the workspace's numbers; empty: the default caller id." />
      <WhenField value={draft.when} onChange={(v) => set('when', v)} error={errors.when} />
      <Field label="Variables" name="variables" multiline rows={3} value={draft.variables} onChange={(v) => set('variables', v)} error={errors.variables} description="One name=value a line, for {{name}} in the agent's prompt and first message." />
      <Field label="Metadata (JSON, optional)" name="metadata" multiline rows={2} value={draft.metadata} onChange={(v) => set('metadata', v)} error={errors.metadata} description={'Free-form data given to the call, e.g. {"order": "A-17"}.'} />
      <Field label="What the callee says (sandbox)" name="caller_script" multiline rows={2} value={draft.caller_script} onChange={(v) => set('caller_script', v)} error={errors.caller_script} description="Sandbox only: one line per turn of the simulated callee." />
    </>
  );
}

export function ScheduleForm({ schedule, onDone }: { schedule?: Schedule; onDone(): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState(() => (schedule ? scheduleDraftOf(schedule) : newScheduleDraft(new Date())));
  const [local, setLocal] = useState<ScheduleDraftErrors>({});
  const set: Set = (key, value) => setDraft((d) => ({ ...d, [key]: value }));
  const save = useMutation({
    mutationFn: async () => {
      // Checked here, not before mutate: the form's own errors and the platform's show alike.
      const update = schedule ? scheduleUpdateOf(draft, schedule) : undefined;
      const create = scheduleCreateOf(draft);
      const errors = update?.errors ?? create.errors;
      setLocal(errors);
      if (Object.keys(errors).length > 0) return false;
      if (schedule && update) await api.schedules.update(schedule.id, update.body);
      else await api.schedules.create(create.body);
      return true;
    },
    onSuccess: (saved) => {
      if (!saved) return;
      void queryClient.invalidateQueries();
      if (!schedule) setDraft(newScheduleDraft(new Date()));
      onDone();
    },
  });
  const failure = save.error ? describeError(save.error) : undefined;
  const errors: ScheduleDraftErrors = { ...local };
  for (const [path, message] of Object.entries(failure?.fields ?? {})) {
    const field = scheduleDraftField(path);
    if (field) errors[field] ??= message;
  }
  return (
    <Form label={schedule ? 'Change the schedule' : 'New schedule'} onSubmit={() => save.mutate()}>
      <Fields draft={draft} set={set} errors={errors} />
      <FormError message={failure?.message} />
      <div className="actions">
        <Button type="submit" isPending={save.isPending}>
          {schedule ? 'Save schedule' : 'Schedule call'}
        </Button>
        {schedule ? (
          <Button variant="secondary" onPress={onDone}>
            Discard changes
          </Button>
        ) : null}
      </div>
    </Form>
  );
}
