import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { describeError } from '../../api/errors.ts';
import { useKey, useWorkspace } from '../../api/workspace.tsx';
import { Button, Field, Form, FormError } from '../../ui/form.tsx';
import { label } from '../../ui/format.ts';
import { QueryView } from '../../ui/states.tsx';
import { hasEnded } from '../call/call-status.ts';
import { CallTranscript } from '../call/call-transcript.tsx';
import { callerScriptOf } from './caller-script.ts';

// A sandbox call to the saved agent with a scripted caller (POST /v1/calls/outbound with
// simulation.caller_script), followed as it goes: the call polled every 2 s until it ends, its
// lines read from its call.transcript events meanwhile.

const DEFAULT_SCRIPT = 'Hi, what are your opening hours?\nThanks, goodbye!';

function LiveCall({ id }: { id: string }) {
  const { api } = useWorkspace();
  const call = useQuery({
    queryKey: useKey('call', id),
    queryFn: () => api.calls.retrieve(id),
    refetchInterval: (query) => (query.state.data && hasEnded(query.state.data) ? false : 2000),
  });
  return (
    <QueryView query={call} loadingLabel="Placing the call…">
      {(data) => (
        <div className="stack">
          <p role="status">
            Call status: <span className={`badge badge-${data.status}`}>{label(data.status)}</span>
            {data.end_reason ? ` (${label(data.end_reason)})` : ''} · <Link href={`/calls/${data.id}`}>Open the call</Link>
          </p>
          <CallTranscript call={data} />
        </div>
      )}
    </QueryView>
  );
}

export function SandboxCall({ agentId, variables }: { agentId: string; variables: Record<string, string> | undefined }) {
  const { api } = useWorkspace();
  const [to, setTo] = useState('+15550100200');
  const [script, setScript] = useState(DEFAULT_SCRIPT);
  const place = useMutation({ mutationFn: () => api.calls.create({ agent_id: agentId, to: to.trim(), variables, simulation: { caller_script: callerScriptOf(script) } }) });
  const failure = place.error ? describeError(place.error) : undefined;
  return (
    <section aria-labelledby="sandbox-heading" className="test-part">
      <h3 id="sandbox-heading">Sandbox call</h3>
      <Form label="Sandbox call" onSubmit={() => variables && place.mutate()}>
        <Field label="Number to call" name="sandbox_to" type="tel" value={to} onChange={setTo} error={failure?.fields.to} description="Any +1555… number answers; +15550100101 is busy, +15550100104 asks for a human, +15550100105 is voicemail." />
        <Field label="Caller script" name="caller_script" multiline rows={4} value={script} onChange={setScript} error={failure?.fields['simulation.caller_script']} description="What the simulated caller says, one line per turn; “[1500] Wait!” interrupts the agent 1.5 s into its turn." />
        <div className="actions">
          <Button type="submit" isDisabled={!variables} isPending={place.isPending}>
            {place.isPending ? 'Placing…' : 'Place sandbox call'}
          </Button>
        </div>
        <FormError message={failure?.message} />
      </Form>
      {place.data ? <LiveCall key={place.data.id} id={place.data.id} /> : null}
    </section>
  );
}
