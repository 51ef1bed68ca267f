import { useState } from 'react';
import { Field } from '../../ui/form.tsx';
import { ChatTest } from './chat-test.tsx';
import { variablesOf } from './json-text.ts';
import { SandboxCall } from './sandbox-call.tsx';

// The agent editor's test panel: a text chat and a sandbox call, both with the saved agent and
// the same values for its prompt's {{variables}}.

export function TestPanel({ agentId }: { agentId: string }) {
  const [text, setText] = useState('');
  const variables = variablesOf(text);
  return (
    <section className="panel test-panel" aria-labelledby="test-heading">
      <h2 id="test-heading">Test the agent</h2>
      <p className="hint">Both use the saved settings: save your changes first.</p>
      <Field label="Variables (JSON)" name="test_variables" multiline rows={2} value={text} onChange={setText} error={variables.error} description={'Values for {{variables}} in the prompt and first message, such as {"customer": "Ada"}; empty: none.'} />
      <ChatTest agentId={agentId} variables={variables.value} />
      <SandboxCall agentId={agentId} variables={variables.value} />
    </section>
  );
}
