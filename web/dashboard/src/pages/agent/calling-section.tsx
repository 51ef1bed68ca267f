import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { useKey, useWorkspace } from '../../api/workspace.tsx';
import { CheckboxField, Field, SelectField } from '../../ui/form.tsx';
import { QueryView } from '../../ui/states.tsx';
import type { VoicemailAction } from '../agent-draft.ts';
import type { SectionProps } from './section-props.ts';

// Where calls go besides the agent: the number it transfers to, what it does on reaching
// voicemail, and the knowledge bases it answers from.

export function TransferSection({ draft, set, errors }: SectionProps) {
  return (
    <fieldset>
      <legend>Transfer and voicemail</legend>
      <Field label="Transfer number" name="transfer_number" type="tel" value={draft.transfer_number} onChange={(v) => set('transfer_number', v)} description="E.164, such as +15550100200: the agent transfers callers who ask for a human. Empty: no transfer." error={errors.transfer_number} />
      <SelectField
        label="On reaching voicemail"
        name="voicemail_action"
        value={draft.voicemail_action}
        onChange={(v) => set('voicemail_action', v as VoicemailAction)}
        options={[
          { value: 'hangup', label: 'Hang up' },
          { value: 'leave_message', label: 'Leave a message' },
        ]}
        error={errors.voicemail_action}
      />
      {draft.voicemail_action === 'leave_message' ? <Field label="Voicemail message" name="voicemail_message" multiline rows={3} value={draft.voicemail_message} onChange={(v) => set('voicemail_message', v)} required error={errors.voicemail_message} /> : null}
    </fieldset>
  );
}

export function KnowledgeSection({ draft, set, errors }: SectionProps) {
  const { api } = useWorkspace();
  const bases = useQuery({ queryKey: useKey('knowledge-bases'), queryFn: async () => (await api.knowledgeBases.list({ limit: 100 })).data });
  const toggle = (id: string, on: boolean) => set('knowledge_base_ids', on ? [...draft.knowledge_base_ids, id] : draft.knowledge_base_ids.filter((k) => k !== id));
  return (
    <fieldset className="checks" aria-describedby={errors.knowledge_base_ids ? 'kb-error' : undefined}>
      <legend>Knowledge bases</legend>
      <QueryView query={bases} loadingLabel="Loading the knowledge bases…" isEmpty={(list) => list.length === 0} empty={
          <p className="hint">
            This workspace has no knowledge base yet: <Link href="/knowledge-bases">create one</Link>.
          </p>
        }>
        {(list) => list.map((kb) => <CheckboxField key={kb.id} label={`${kb.name} (${kb.chunk_count} passages)`} name="knowledge_base_ids" checked={draft.knowledge_base_ids.includes(kb.id)} onChange={(on) => toggle(kb.id, on)} />)}
      </QueryView>
      {draft.knowledge_base_ids
        .filter((id) => bases.data && !bases.data.some((kb) => kb.id === id))
        .map((id) => (
          <CheckboxField key={id} label={`${id} (not found)`} checked onChange={() => toggle(id, false)} />
        ))}
      {errors.knowledge_base_ids ? (
        <span id="kb-error" className="field-error">
          {errors.knowledge_base_ids}
        </span>
      ) : null}
      <p className="hint">
        The agent answers from the passages of the bases checked. <Link href="/knowledge-bases">Manage knowledge bases</Link>
      </p>
    </fieldset>
  );
}
