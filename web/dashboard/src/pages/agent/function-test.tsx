import { useMutation } from '@tanstack/react-query';
import type { AgentFunction, FunctionTestResult } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../../api/errors.ts';
import { useWorkspace } from '../../api/workspace.tsx';
import { Button, Field, FormError } from '../../ui/form.tsx';
import { exampleArguments } from './function-draft.ts';
import { parseArguments } from './json-text.ts';

// "Test function": calls one saved function of the agent as a live call would
// (POST /v1/agents/{id}/test-function) and shows what was sent and what came back.

function Exchange({ fn, sent, result }: { fn: AgentFunction; sent: Record<string, unknown>; result: FunctionTestResult }) {
  return (
    <div className="exchange" data-testid="function-test-result">
      <p className="exchange-label">Request</p>
      <pre>{`${fn.method} ${fn.url}\n${JSON.stringify({ function: fn.name, arguments: sent }, null, 2)}`}</pre>
      <p className="exchange-label">Response</p>
      {result.error ? (
        <p className="field-error">
          {result.error.code.replaceAll('_', ' ')}: {result.error.message}
        </p>
      ) : (
        <p>
          Status <strong data-testid="function-test-status">{result.status}</strong> in {result.duration_ms} ms
        </p>
      )}
      {result.body !== null && result.body !== undefined ? <pre>{typeof result.body === 'string' ? result.body : JSON.stringify(result.body, null, 2)}</pre> : null}
    </div>
  );
}

export function FunctionTest({ agentId, fn }: { agentId: string; fn: AgentFunction }) {
  const { api } = useWorkspace();
  const [text, setText] = useState(() => JSON.stringify(exampleArguments(fn.parameters), null, 2));
  const parsed = parseArguments(text);
  const run = useMutation({ mutationFn: (args: Record<string, unknown>) => api.agents.testFunction(agentId, { name: fn.name, arguments: args }).then((result) => ({ args, result })) });
  return (
    <div className="function-test">
      <Field label={`Test arguments for ${fn.name}`} name="test_arguments" multiline rows={4} value={text} onChange={setText} error={parsed.error} description="A JSON object, sent as a live call would send it." />
      <Button variant="secondary" onPress={() => parsed.value && run.mutate(parsed.value)} isDisabled={!parsed.value} isPending={run.isPending}>
        {run.isPending ? 'Calling the function…' : `Run ${fn.name}`}
      </Button>
      <FormError message={run.error ? describeError(run.error).message : undefined} />
      {run.data ? <Exchange fn={fn} sent={run.data.args} result={run.data.result} /> : null}
    </div>
  );
}
