import type { AgentFunction } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Button, Field, SelectField } from '../../ui/form.tsx';
import { FunctionTest } from './function-test.tsx';
import { checkSchema, FUNCTION_METHODS, type FunctionDraft, type FunctionMethod, newFunctionDraft } from './function-draft.ts';
import type { SectionProps } from './section-props.ts';

// The agent's functions (webhook tools the model may call): each with its URL, method, timeout
// and arguments JSON Schema, checked as it is typed; a saved function can be tested here.

interface FunctionEditorProps {
  index: number;
  draft: FunctionDraft;
  saved: AgentFunction | undefined;
  agentId: string;
  errors: Record<string, string>;
  change(next: FunctionDraft): void;
  remove(): void;
}

function FunctionEditor({ index, draft, saved, agentId, errors, change, remove }: FunctionEditorProps) {
  const [testing, setTesting] = useState(false);
  const at = (field: string) => errors[`functions.${index}.${field}`];
  const edit = <K extends keyof FunctionDraft>(key: K, value: FunctionDraft[K]) => change({ ...draft, [key]: value });
  // Checked on every keystroke: the parse error shows while typing, not only on save.
  const schemaError = checkSchema(draft.parameters).error ?? at('parameters');
  const title = `Function ${index + 1}${draft.name ? `: ${draft.name}` : ''}`;
  return (
    <fieldset className="editor-item">
      <legend>{title}</legend>
      <Field label="Function name" name={`functions.${index}.name`} value={draft.name} onChange={(v) => edit('name', v)} required error={at('name')} description="Letters, digits and _, such as lookup_order." />
      <Field label="Function description" name={`functions.${index}.description`} value={draft.description} onChange={(v) => edit('description', v)} error={at('description')} description="When the model should call it." />
      <Field label="Function URL" name={`functions.${index}.url`} type="url" value={draft.url} onChange={(v) => edit('url', v)} required error={at('url')} />
      <div className="field-row">
        <SelectField label="HTTP method" name={`functions.${index}.method`} value={draft.method} onChange={(v) => edit('method', v as FunctionMethod)} options={FUNCTION_METHODS.map((m) => ({ value: m, label: m }))} />
        <Field label="Timeout (ms)" name={`functions.${index}.timeout_ms`} type="number" min={100} max={30000} value={draft.timeout_ms} onChange={(v) => edit('timeout_ms', v)} error={at('timeout_ms')} />
      </div>
      <Field label="Parameters (JSON Schema)" name={`functions.${index}.parameters`} multiline rows={8} value={draft.parameters} onChange={(v) => edit('parameters', v)} error={schemaError} description="The arguments object the model sends, as a JSON Schema." />
      <div className="actions">
        <Button variant="secondary" onPress={() => setTesting((open) => !open)} aria-expanded={testing}>
          {testing ? `Close the test of ${draft.name || 'this function'}` : `Test function ${draft.name}`.trim()}
        </Button>
        <Button variant="danger" onPress={remove}>
          {`Remove function ${draft.name}`.trim()}
        </Button>
      </div>
      {testing && saved ? <FunctionTest agentId={agentId} fn={saved} /> : null}
      {testing && !saved ? <p className="hint">Save the agent first: the test calls the saved function.</p> : null}
    </fieldset>
  );
}

export function FunctionsSection({ draft, set, errors, agentId, saved }: SectionProps & { agentId: string; saved: AgentFunction[] }) {
  const change = (index: number, next: FunctionDraft) => set('functions', draft.functions.map((f, i) => (i === index ? next : f)));
  const remove = (index: number) => set('functions', draft.functions.filter((_, i) => i !== index));
  return (
    <fieldset>
      <legend>Functions</legend>
      {draft.functions.length === 0 ? <p className="hint">No functions: the agent calls no outside service.</p> : null}
      {draft.functions.map((fn, index) => (
        <FunctionEditor key={fn.key} index={index} draft={fn} saved={saved.find((s) => s.name === fn.name.trim())} agentId={agentId} errors={errors} change={(next) => change(index, next)} remove={() => remove(index)} />
      ))}
      <div>
        <Button variant="secondary" onPress={() => set('functions', [...draft.functions, newFunctionDraft()])}>
          Add function
        </Button>
      </div>
    </fieldset>
  );
}
