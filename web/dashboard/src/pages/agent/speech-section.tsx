import { useQuery } from '@tanstack/react-query';
import { useWorkspace } from '../../api/workspace.tsx';
import { Field, SelectField } from '../../ui/form.tsx';
import { LANGUAGES } from '../agent-draft.ts';
import type { SectionProps } from './section-props.ts';
import { VoicePreview } from './voice-preview.tsx';

// What the agent says and how it sounds: name, prompt, first message, voice (with its preview)
// and language.

/** A speech-to-speech agent speaks with the model's own voices (the API's REALTIME_VOICES). */
const REALTIME_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse', 'marin', 'cedar'];

export function SpeechSection({ draft, set, errors }: SectionProps) {
  const { api } = useWorkspace();
  const voices = useQuery({ queryKey: ['voices'], queryFn: async () => (await api.voices.list()).data, staleTime: Number.POSITIVE_INFINITY });
  const realtime = draft.llm_provider === 'openai-realtime';
  const voiceOptions = realtime ? REALTIME_VOICES.map((v) => ({ value: v, label: `${v} (speech-to-speech model)` })) : (voices.data ?? []).map((v) => ({ value: v.id, label: `${v.name} (${v.language}, ${v.gender})` }));
  if (!voiceOptions.some((o) => o.value === draft.voice)) voiceOptions.unshift({ value: draft.voice, label: draft.voice });
  return (
    <fieldset>
      <legend>Conversation</legend>
      <Field label="Name" name="name" value={draft.name} onChange={(v) => set('name', v)} required error={errors.name} />
      <Field label="Prompt" name="prompt" multiline rows={8} value={draft.prompt} onChange={(v) => set('prompt', v)} description="The system prompt; {{variables}} of a call are substituted." error={errors.prompt} />
      <Field label="First message" name="first_message" value={draft.first_message} onChange={(v) => set('first_message', v)} description="What the agent says when the call is answered; empty: it waits for the caller." error={errors.first_message} />
      <SelectField label="Voice" name="voice" value={draft.voice} onChange={(v) => set('voice', v)} options={voiceOptions} error={errors.voice} description={voices.isError ? 'The voices could not be listed.' : undefined} />
      {realtime ? null : <VoicePreview voice={draft.voice} />}
      <SelectField label="Language" name="language" value={draft.language} onChange={(v) => set('language', v)} options={LANGUAGES.map((l) => ({ value: l, label: l }))} error={errors.language} />
    </fieldset>
  );
}
