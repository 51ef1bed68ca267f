import { Button, Field, SelectField } from '../../ui/form.tsx';
import { EXTRACTION_TYPES, type ExtractionDraft, type ExtractionType, newExtractionDraft } from './extraction-draft.ts';
import type { SectionProps } from './section-props.ts';

// The fields extracted from each call once it ends (shown on the call's page and sent in
// call.completed): a name, a type, what to look for, and the values of an enum.

function ExtractionEditor({ index, draft, errors, change, remove }: { index: number; draft: ExtractionDraft; errors: Record<string, string>; change(next: ExtractionDraft): void; remove(): void }) {
  const at = (field: string) => errors[`extraction_fields.${index}.${field}`];
  const edit = <K extends keyof ExtractionDraft>(key: K, value: ExtractionDraft[K]) => change({ ...draft, [key]: value });
  return (
    <fieldset className="editor-item">
      <legend>{`Field ${index + 1}${draft.name ? `: ${draft.name}` : ''}`}</legend>
      <div className="field-row">
        <Field label="Field name" name={`extraction_fields.${index}.name`} value={draft.name} onChange={(v) => edit('name', v)} required error={at('name')} />
        <SelectField label="Field type" name={`extraction_fields.${index}.type`} value={draft.type} onChange={(v) => edit('type', v as ExtractionType)} options={EXTRACTION_TYPES.map((t) => ({ value: t, label: t }))} error={at('type')} />
      </div>
      <Field label="What to extract" name={`extraction_fields.${index}.description`} value={draft.description} onChange={(v) => edit('description', v)} error={at('description')} description="Such as: the caller's email address." />
      {draft.type === 'enum' ? <Field label="Values" name={`extraction_fields.${index}.enum`} value={draft.values} onChange={(v) => edit('values', v)} required error={at('enum')} description="Separated by commas, such as: new, existing." /> : null}
      <div>
        <Button variant="danger" onPress={remove}>
          {`Remove field ${draft.name}`.trim()}
        </Button>
      </div>
    </fieldset>
  );
}

export function ExtractionSection({ draft, set, errors }: SectionProps) {
  const change = (index: number, next: ExtractionDraft) => set('extraction_fields', draft.extraction_fields.map((f, i) => (i === index ? next : f)));
  const remove = (index: number) => set('extraction_fields', draft.extraction_fields.filter((_, i) => i !== index));
  return (
    <fieldset>
      <legend>Extraction fields</legend>
      {draft.extraction_fields.length === 0 ? <p className="hint">No fields: calls end with nothing extracted.</p> : null}
      {draft.extraction_fields.map((field, index) => (
        <ExtractionEditor key={field.key} index={index} draft={field} errors={errors} change={(next) => change(index, next)} remove={() => remove(index)} />
      ))}
      <div>
        <Button variant="secondary" onPress={() => set('extraction_fields', [...draft.extraction_fields, newExtractionDraft()])}>
          Add extraction field
        </Button>
      </div>
    </fieldset>
  );
}
