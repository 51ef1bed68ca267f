import type { AgentUpdate, ExtractionField } from '../../../../../sdks/typescript/src/index.ts';
import { nextKey } from './function-draft.ts';

// An extraction field (what the agent pulls out of a call's words once it ends) as the editor
// holds it: the enum's values typed as one comma-separated line.

export const EXTRACTION_TYPES = ['string', 'number', 'boolean', 'enum'] as const;
export type ExtractionType = (typeof EXTRACTION_TYPES)[number];

export interface ExtractionDraft {
  /** The list's React key (not sent). */
  key: string;
  name: string;
  type: ExtractionType;
  description: string;
  /** Comma-separated values (type enum only). */
  values: string;
}

export function newExtractionDraft(): ExtractionDraft {
  return { key: nextKey(), name: '', type: 'string', description: '', values: '' };
}

export function extractionDraftOf(field: ExtractionField): ExtractionDraft {
  return { key: nextKey(), name: field.name, type: field.type, description: field.description, values: (field.enum ?? []).join(', ') };
}

/** "a, b,,c " → ["a", "b", "c"] */
export const valuesOf = (text: string) =>
  text
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean);

/** The fields as the API takes them; problems go to `errors` under `extraction_fields.<i>.<field>`. */
export function extractionFieldsOf(drafts: ExtractionDraft[], errors: Record<string, string>): NonNullable<AgentUpdate['extraction_fields']> {
  return drafts.map((draft, i) => {
    const values = valuesOf(draft.values);
    if (draft.name.trim() === '') errors[`extraction_fields.${i}.name`] = 'Name the field (letters, digits and _)';
    if (draft.type === 'enum' && values.length === 0) errors[`extraction_fields.${i}.enum`] = 'List the values, separated by commas';
    return { name: draft.name.trim(), type: draft.type, description: draft.description, ...(draft.type === 'enum' ? { enum: values } : {}) };
  });
}
