import { CheckboxField, Field, SelectField } from '../../ui/form.tsx';
import type { AgentDraft } from '../agent-draft.ts';
import type { SectionProps } from './section-props.ts';

// The language model, turn taking and the call's limits.

export function ModelSection({ draft, set, errors }: SectionProps) {
  return (
    <fieldset>
      <legend>Language model</legend>
      <SelectField
        label="LLM provider"
        name="llm_provider"
        value={draft.llm_provider}
        onChange={(v) => {
          const provider = v as AgentDraft['llm_provider'];
          set('llm_provider', provider);
          // The voice of the other kind does not fit: the server's default voice of the kind is taken.
          if ((provider === 'openai-realtime') !== (draft.llm_provider === 'openai-realtime')) set('voice', provider === 'openai-realtime' ? 'alloy' : 'builtin-ava');
        }}
        options={[
          { value: 'builtin', label: 'Built-in (offline)' },
          { value: 'openai', label: 'OpenAI-compatible' },
          { value: 'openai-realtime', label: 'Speech-to-speech (OpenAI Realtime)' },
        ]}
        error={errors.llm_provider}
      />
      <Field label="Model" name="llm_model" value={draft.llm_model} onChange={(v) => set('llm_model', v)} error={errors.llm_model} />
      <Field label="Temperature" name="llm_temperature" type="number" step="any" min={0} max={2} value={draft.llm_temperature} onChange={(v) => set('llm_temperature', v)} error={errors.llm_temperature} />
    </fieldset>
  );
}

export function LimitsSection({ draft, set, errors }: SectionProps) {
  return (
    <fieldset>
      <legend>Turn taking and limits</legend>
      <Field label="End-call phrases" name="end_call_phrases" multiline rows={3} value={draft.end_call_phrases} onChange={(v) => set('end_call_phrases', v)} description="One per line: the agent ends the call after saying one." error={errors.end_call_phrases} />
      <Field label="Maximum call length (seconds)" name="max_duration_seconds" type="number" min={10} value={draft.max_duration_seconds} onChange={(v) => set('max_duration_seconds', v)} error={errors.max_duration_seconds} />
      <Field label="Silence before hanging up (seconds)" name="silence_timeout_seconds" type="number" min={2} value={draft.silence_timeout_seconds} onChange={(v) => set('silence_timeout_seconds', v)} error={errors.silence_timeout_seconds} />
      <Field label="End of turn after silence (ms)" name="turn_end_silence_ms" type="number" min={100} value={draft.turn_end_silence_ms} onChange={(v) => set('turn_end_silence_ms', v)} error={errors.turn_end_silence_ms} />
      <Field label="Barge-in after caller speech (ms)" name="barge_in_min_ms" type="number" min={50} value={draft.barge_in_min_ms} onChange={(v) => set('barge_in_min_ms', v)} error={errors.barge_in_min_ms} />
      <CheckboxField label="The caller may interrupt the agent" name="interruptible" checked={draft.interruptible} onChange={(on) => set('interruptible', on)} />
    </fieldset>
  );
}
