import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { VoiceSessionCreated } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Link } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, Field, Form, FormError, SelectField } from '../ui/form.tsx';
import { dateTime, label, usd } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { metadataOf } from '../ui/text-lists.ts';
import { Empty, QueryView } from '../ui/states.tsx';
import { useAgentOptions } from './agent-options.tsx';
import { ConnectDetails } from './voice-connect-details.tsx';

// Headless voice sessions (an agent in the developer's own app, over the built-in media
// WebSocket or LiveKit): the media configuration, a new session or a bare media token with what
// is needed to connect (shown once), and the sessions with their cost, ended here on demand.

function MediaHealth() {
  const { api } = useWorkspace();
  const health = useQuery({ queryKey: useKey('media-health'), queryFn: () => api.media.health() });
  return (
    <section className="panel" aria-labelledby="media-heading">
      <h2 id="media-heading">Real-time media</h2>
      <QueryView query={health} loadingLabel="Checking the media configuration…">
        {(data) => (
          <p>
            Transport: <strong>{data.provider === 'livekit' ? 'LiveKit' : 'built-in media WebSocket'}</strong> · {data.configured ? 'configured' : 'not configured'}
            {data.reachable === null ? '' : data.reachable ? ` · reachable${data.latency_ms !== null ? ` in ${data.latency_ms} ms` : ''}` : ' · not reachable'}
          </p>
        )}
      </QueryView>
    </section>
  );
}

function NewSession({ onCreated }: { onCreated(session: VoiceSessionCreated): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const agents = useAgentOptions();
  const [kind, setKind] = useState<'session' | 'token'>('session');
  const [agentId, setAgentId] = useState('');
  const [user, setUser] = useState('');
  const [metadata, setMetadata] = useState('');
  const parsed = metadataOf(metadata);
  const create = useMutation({
    mutationFn: () =>
      kind === 'session'
        ? api.voiceSessions.create({ agent_id: agentId, external_user_id: user.trim(), ...(parsed.metadata ? { metadata: parsed.metadata } : {}) })
        : api.media.createToken({ agent_id: agentId, ...(user.trim() ? { external_user_id: user.trim() } : {}) }),
    onSuccess: (session) => {
      onCreated(session);
      void queryClient.invalidateQueries();
    },
  });
  const failure = create.error ? describeError(create.error) : undefined;
  const ready = agentId !== '' && (kind === 'token' || user.trim() !== '') && !parsed.error;
  return (
    <Form label="New voice session" onSubmit={() => ready && create.mutate()}>
      <SelectField
        label="What to create"
        name="kind"
        value={kind}
        onChange={(v) => setKind(v as 'session' | 'token')}
        options={[
          { value: 'session', label: 'A voice session (POST /v1/voice/sessions)' },
          { value: 'token', label: 'A media token for a browser call (POST /v1/media/token)' },
        ]}
      />
      <SelectField label="Agent" name="agent_id" value={agentId} onChange={setAgentId} options={agents.options} error={failure?.fields.agent_id} />
      <Field label={kind === 'session' ? 'External user id' : 'External user id (optional)'} name="external_user_id" value={user} onChange={setUser} required={kind === 'session'} error={failure?.fields.external_user_id} description="Your id of the end user; it comes back in voice_session.ended." />
      {kind === 'session' ? <Field label="Metadata (JSON, optional)" name="metadata" multiline rows={2} value={metadata} onChange={setMetadata} error={parsed.error ?? failure?.fields.metadata} /> : null}
      <FormError message={failure?.message} />
      <div className="actions">
        <Button type="submit" isDisabled={!ready} isPending={create.isPending}>
          {kind === 'session' ? 'Create voice session' : 'Get media token'}
        </Button>
      </div>
    </Form>
  );
}

function Sessions() {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const { nameOf } = useAgentOptions();
  const sessions = useQuery({ queryKey: useKey('voice-sessions'), queryFn: async () => (await api.voiceSessions.list({ limit: 100 })).data, refetchInterval: 5000 });
  const end = useMutation({ mutationFn: (id: string) => api.voiceSessions.end(id), onSuccess: () => void queryClient.invalidateQueries() });
  return (
    <>
      <FormError message={end.error ? describeError(end.error).message : undefined} />
      <QueryView query={sessions} isEmpty={(list) => list.length === 0} empty={<Empty title="No voice sessions yet.">Create one above to connect your app to an agent.</Empty>}>
        {(list) => (
          <DataTable caption="Voice sessions" columns={['Created', 'User', 'Agent', 'Status', 'Duration', 'Cost', 'Call', 'End']}>
            {list.map((session) => (
              <tr key={session.id}>
                <td>{dateTime(session.created_at)}</td>
                <td>{session.external_user_id}</td>
                <td>{nameOf(session.agent_id)}</td>
                <td>
                  <span className={`badge badge-${session.status}`}>{session.end_reason ? `${session.status}: ${label(session.end_reason)}` : session.status}</span>
                </td>
                <td>{session.duration_sec.toFixed(1)} s</td>
                <td>{usd(session.cost_usd)}</td>
                <td>
                  <Link href={`/calls/${session.call_id}`}>Open the call</Link>
                </td>
                <td>
                  {session.status === 'active' ? (
                    <Button variant="secondary" onPress={() => end.mutate(session.id)} isPending={end.isPending} aria-label={`End the session of ${session.external_user_id}`}>
                      End
                    </Button>
                  ) : (
                    dateTime(session.ended_at)
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryView>
    </>
  );
}

export function VoiceSessionsPage() {
  const [created, setCreated] = useState<VoiceSessionCreated>();
  return (
    <>
      <PageTitle>Voice sessions</PageTitle>
      <MediaHealth />
      {created ? <ConnectDetails session={created} onDismiss={() => setCreated(undefined)} /> : null}
      <section className="panel" aria-labelledby="new-session-heading">
        <h2 id="new-session-heading">New session</h2>
        <NewSession onCreated={setCreated} />
      </section>
      <h2>Sessions</h2>
      <Sessions />
    </>
  );
}
