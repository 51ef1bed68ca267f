import { useState } from 'react';
import { Button } from './form.tsx';

// A secret the platform shows once (an API key, a webhook secret): displayed with a copy button
// and the warning that it will not be shown again.

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState<'idle' | 'done' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('done');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <>
      <Button variant="secondary" onPress={() => void copy()}>
        {label}
      </Button>
      <span role="status" className="hint">
        {copied === 'done' ? 'Copied' : copied === 'failed' ? 'Copy failed: select the text and copy it' : ''}
      </span>
    </>
  );
}

export function SecretOnce({ title, value, onDismiss }: { title: string; value: string; onDismiss?: () => void }) {
  return (
    <section className="secret" aria-label={title}>
      <h2>{title}</h2>
      <p>Copy it now: it is shown only this once.</p>
      <div className="secret-row">
        <code data-testid="secret-value">{value}</code>
        <CopyButton text={value} />
      </div>
      {onDismiss ? (
        <Button variant="link" onPress={onDismiss}>
          I have saved it
        </Button>
      ) : null}
    </section>
  );
}
