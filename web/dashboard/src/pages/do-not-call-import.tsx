import { useQueryClient } from '@tanstack/react-query';
import { ApiError } from '@voice-agent-platform/sdk';
import { useRef, useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useWorkspace } from '../api/workspace.tsx';
import { Button, Field, Form, FormError } from '../ui/form.tsx';
import { type AddFailure, type ImportOutcome, importNumbers, importPreview, importSummary, MAX_IMPORT, retryAfterMs } from './dnc-import.ts';
import { parseNumberList } from './phone-number-input.ts';

// Importing many numbers into the do-not-call list: pasted, or read from a CSV or text file (the
// first column the number, the second an optional reason). Checked and counted before anything
// is sent; then sent one by one, with the progress announced and a way to stop.

function failureOf(error: unknown): AddFailure {
  if (error instanceof ApiError && error.status === 429) return { retryAfterMs: retryAfterMs(error.headers.get('retry-after')) };
  return { message: describeError(error).message };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function Report({ outcome, invalid }: { outcome: ImportOutcome; invalid: { line: number; text: string }[] }) {
  if (outcome.refused.length === 0 && invalid.length === 0) return null;
  return (
    <ul className="import-report">
      {invalid.slice(0, 20).map((item) => (
        <li key={`line-${item.line}`}>
          Line {item.line} skipped, not a phone number: “{item.text}”
        </li>
      ))}
      {outcome.refused.slice(0, 20).map((item) => (
        <li key={`refused-${item.number}`}>
          {item.number} refused: {item.message}
        </li>
      ))}
    </ul>
  );
}

export function ImportList() {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [text, setText] = useState('');
  const [fileError, setFileError] = useState<string>();
  const [progress, setProgress] = useState('');
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<{ outcome: ImportOutcome; invalid: { line: number; text: string }[] }>();
  const stop = useRef(false);
  const parsed = parseNumberList(text);

  const readFile = async (file: File | undefined) => {
    setFileError(undefined);
    if (!file) return;
    if (file.size > 2 * 1024 * 1024) return setFileError('This file is over 2 MB: split it.');
    setText(await file.text());
  };
  const run = async () => {
    if (parsed.entries.length === 0) return;
    stop.current = false;
    setRunning(true);
    setResult(undefined);
    const outcome = await importNumbers(parsed.entries, {
      add: async (entry) => {
        await api.dnc.add(entry);
      },
      failureOf,
      sleep,
      onProgress: (done, total) => setProgress(`Importing: ${done} of ${total}…`),
      stopped: () => stop.current,
    });
    setRunning(false);
    setProgress(importSummary(outcome, parsed.invalid.length));
    setResult({ outcome, invalid: parsed.invalid });
    void queryClient.invalidateQueries();
  };
  const over = parsed.entries.length > MAX_IMPORT;
  return (
    <section className="panel spaced" aria-labelledby="dnc-import-heading">
      <h2 id="dnc-import-heading">Import a list</h2>
      <Form label="Import a list" className="form" onSubmit={() => void run()}>
        <div className="field">
          <label htmlFor="dnc-file">CSV or text file</label>
          <input id="dnc-file" type="file" accept=".csv,.txt,text/csv,text/plain" aria-describedby="dnc-file-error" onChange={(event) => void readFile(event.target.files?.[0])} />
          <span id="dnc-file-error" className="field-error">
            {fileError}
          </span>
        </div>
        <Field label="Numbers" name="numbers" multiline rows={6} value={text} onChange={setText} description="One a line; a reason may follow after a comma. A file's content shows here before it is imported." />
        <p className="hint" data-testid="dnc-import-preview">
          {text.trim() === '' ? 'Nothing to import yet.' : importPreview(parsed)}
        </p>
        <FormError message={over ? `Only the first ${MAX_IMPORT} numbers are imported at once.` : undefined} />
        <div className="actions">
          <Button type="submit" isDisabled={parsed.entries.length === 0} isPending={running}>
            Import numbers
          </Button>
          {running ? (
            <Button variant="secondary" onPress={() => {
                stop.current = true;
              }}>
              Stop
            </Button>
          ) : null}
          <span role="status" className="hint">
            {progress}
          </span>
        </div>
      </Form>
      {result ? <Report outcome={result.outcome} invalid={result.invalid} /> : null}
    </section>
  );
}
