import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Agent, PhoneNumber } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Link } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button, FormError } from '../ui/form.tsx';
import { dateTime, usd } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';
import { ConfirmDialog } from './confirm-dialog.tsx';
import { BuyNumber, ImportNumber } from './phone-number-buy.tsx';

// The workspace's phone numbers: each one's agent (inbound calls to the number start it),
// changed in place; a number released after a question; numbers bought from the provider's
// inventory or brought from an account already held there (below).

function AgentPicker({ number, agents, onDone }: { number: PhoneNumber; agents: Agent[]; onDone(note: string): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [agentId, setAgentId] = useState(number.agent_id ?? '');
  const save = useMutation({
    mutationFn: () => (agentId ? api.phoneNumbers.assign(number.id, { agent_id: agentId }) : api.phoneNumbers.unassign(number.id)),
    onSuccess: (saved) => {
      void queryClient.invalidateQueries();
      const agent = agents.find((a) => a.id === saved.agent_id);
      onDone(agent ? `${saved.number} now starts ${agent.name}.` : `${saved.number} has no agent now.`);
    },
  });
  const id = `agent-of-${number.id}`;
  return (
    <div className="row-actions">
      <label htmlFor={id} className="visually-hidden">
        Agent for {number.number}
      </label>
      <select id={id} value={agentId} onChange={(event) => setAgentId(event.target.value)}>
        <option value="">No agent</option>
        {number.agent_id && !agents.some((a) => a.id === number.agent_id) ? <option value={number.agent_id}>{number.agent_id}</option> : null}
        {agents.map((agent) => (
          <option key={agent.id} value={agent.id}>
            {agent.name}
          </option>
        ))}
      </select>
      <Button variant="secondary" onPress={() => save.mutate()} isDisabled={agentId === (number.agent_id ?? '')} isPending={save.isPending} aria-label={`Save the agent of ${number.number}`}>
        Save
      </Button>
      <FormError message={save.error ? describeError(save.error).message : undefined} />
    </div>
  );
}

function ReleaseDialog({ number, onClose, onDone }: { number: PhoneNumber; onClose(): void; onDone(note: string): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const release = useMutation({
    mutationFn: () => api.phoneNumbers.release(number.id),
    onSuccess: () => {
      void queryClient.invalidateQueries();
      onDone(`${number.number} is released.`);
      onClose();
    },
  });
  return (
    <ConfirmDialog title={`Release ${number.number}?`} confirmLabel="Release number" onConfirm={() => release.mutate()} onClose={onClose} pending={release.isPending} error={release.error}>
      <p>It goes back to the provider: calls to it no longer reach your agent, and you may not get it back.</p>
    </ConfirmDialog>
  );
}

function NumberTable({ numbers, agents, onDone }: { numbers: PhoneNumber[]; agents: Agent[]; onDone(note: string): void }) {
  const [releasing, setReleasing] = useState<PhoneNumber>();
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Your phone numbers</caption>
        <thead>
          <tr>
            <th scope="col">Number</th>
            <th scope="col">Agent (inbound)</th>
            <th scope="col">Release</th>
            <th scope="col">Monthly</th>
            <th scope="col">Provider</th>
            <th scope="col">Since</th>
          </tr>
        </thead>
        <tbody>
          {numbers.map((number) => (
            <tr key={number.id} data-number={number.number}>
              <td>
                <strong>{number.number}</strong>
                {number.label ? <div className="hint">{number.label}</div> : null}
              </td>
              <td>
                <AgentPicker key={number.agent_id ?? ''} number={number} agents={agents} onDone={onDone} />
              </td>
              <td>
                <Button variant="danger" onPress={() => setReleasing(number)} aria-label={`Release ${number.number}`}>
                  Release
                </Button>
              </td>
              <td>{usd(number.monthly_cost_usd)}</td>
              <td>{number.provider}</td>
              <td>{dateTime(number.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {releasing ? <ReleaseDialog number={releasing} onClose={() => setReleasing(undefined)} onDone={onDone} /> : null}
    </div>
  );
}

export function PhoneNumbersPage() {
  const { api } = useWorkspace();
  const numbers = useQuery({ queryKey: useKey('phone-numbers'), queryFn: async () => (await api.phoneNumbers.list({ limit: 100 })).data });
  // Fetched again on each visit: an agent made elsewhere since is offered at once.
  const agents = useQuery({ queryKey: useKey('agents'), queryFn: async () => (await api.agents.list({ limit: 100 })).data, staleTime: 0 });
  const [note, setNote] = useState('');
  return (
    <>
      <PageTitle>Phone numbers</PageTitle>
      <section className="panel" aria-labelledby="owned-heading">
        <h2 id="owned-heading">Your numbers</h2>
        <p role="status" className="hint">
          {note}
        </p>
        <QueryView query={numbers} isEmpty={(list) => list.length === 0} empty={<Empty title="No phone numbers yet.">Buy one below, then choose the agent that answers it.</Empty>} loadingLabel="Loading your numbers…">
          {(list) => (
            <>
              {agents.isSuccess && agents.data.length === 0 ? (
                <p className="hint">
                  No agent to answer them yet: <Link href="/agents">create one</Link>.
                </p>
              ) : null}
              <NumberTable numbers={list} agents={agents.data ?? []} onDone={setNote} />
            </>
          )}
        </QueryView>
      </section>
      <BuyNumber onBought={setNote} />
      <ImportNumber onImported={setNote} />
    </>
  );
}
