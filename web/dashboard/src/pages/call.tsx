import { useQuery } from '@tanstack/react-query';
import type { Call } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Link } from 'wouter';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button } from '../ui/form.tsx';
import { dateTime, label, usd } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { QueryView } from '../ui/states.tsx';
import { CallControls } from './call/call-controls.tsx';
import { hasEnded, settling } from './call/call-status.ts';
import { CallDeliveries } from './call/deliveries.tsx';
import { CallTranscript } from './call/call-transcript.tsx';

// One call: its status and history, hang up or transfer while live, the recording, the
// transcript with each turn's time and latency, the extracted fields, the cost and the webhook
// events sent. Polled while the call or its post-call work (recording, extraction) is still going.

/** The signed recording link on this origin (the platform names its public address, which a proxy may rewrite). */
function sameOrigin(url: string): string {
  const parsed = new URL(url, location.origin);
  return `${parsed.pathname}${parsed.search}`;
}

function Recording({ call, refetch }: { call: Call; refetch(): void }) {
  const [failed, setFailed] = useState(false);
  if (!hasEnded(call)) return <p>The recording is made once the call ends.</p>;
  if (call.recording_status === 'pending') return <p role="status">The recording is being made…</p>;
  if (call.recording_status === 'failed') return <p>The recording could not be made{call.recording_error ? `: ${call.recording_error}` : '.'}</p>;
  if (!call.recording_url) return <p>This call has no recording.</p>;
  if (failed) {
    // A 409 recording_not_ready (or an expired link): ask for the call again, with a fresh link.
    return (
      <p role="alert">
        The recording is not ready yet.{' '}
        <Button variant="secondary" onPress={() => { setFailed(false); refetch(); }}>
          Try again
        </Button>
      </p>
    );
  }
  return (
    // biome-ignore lint/a11y/useMediaCaption: the transcript below is the recording's text
    <audio controls preload="metadata" src={sameOrigin(call.recording_url)} onError={() => setFailed(true)} aria-label="Call recording" />
  );
}

function Summary({ call }: { call: Call }) {
  const rows: [string, string][] = [
    ['Status', label(call.status)],
    ['Ended because', call.end_reason ? label(call.end_reason) : '—'],
    ['Direction', call.direction],
    ['From', call.from ?? '—'],
    ['To', call.to ?? '—'],
    ['Started', dateTime(call.started_at)],
    ['Ended', dateTime(call.ended_at)],
    ['Billed duration', `${call.duration_seconds} s`],
    ['Cost', usd(call.cost_usd)],
    ['Transferred to', call.transferred_to ?? '—'],
    ['Error', call.error ? `${label(call.error.code)}: ${call.error.message}` : '—'],
    ['Latency (p50 / p95)', call.latency ? `${call.latency.p50_ms ?? '—'} ms / ${call.latency.p95_ms ?? '—'} ms over ${call.latency.turns} turns` : '—'],
  ];
  return (
    <dl className="facts">
      {rows.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd data-field={name}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Timeline({ id, status }: { id: string; status: Call['status'] }) {
  const { api } = useWorkspace();
  const events = useQuery({ queryKey: useKey('call-events', id, status), queryFn: async () => (await api.calls.events(id)).data, placeholderData: (previous) => previous });
  return (
    <QueryView query={events} isEmpty={(list) => list.length === 0} empty={<p>No status changes yet.</p>}>
      {(list) => (
        <ol className="timeline">
          {list.map((event) => (
            <li key={`${event.status}-${event.at}`}>
              <strong>{label(event.status)}</strong> {dateTime(event.at)}
            </li>
          ))}
        </ol>
      )}
    </QueryView>
  );
}

function Extracted({ call }: { call: Call }) {
  const entries = Object.entries(call.extracted);
  if (!hasEnded(call)) return <p>The fields are extracted once the call ends.</p>;
  if (call.analysis_status === 'pending') return <p role="status">The fields are being extracted…</p>;
  if (entries.length === 0) return <p>No fields were extracted (the agent defines none, or the call had nothing to say).</p>;
  return (
    <dl className="facts">
      {entries.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
        </div>
      ))}
    </dl>
  );
}

export function CallPage({ id }: { id: string }) {
  const { api } = useWorkspace();
  const call = useQuery({
    queryKey: useKey('call', id),
    queryFn: () => api.calls.retrieve(id),
    refetchInterval: (query) => (query.state.data && settling(query.state.data) ? 1500 : false),
  });
  return (
    <>
      <PageTitle actions={<Link href="/calls">All calls</Link>}>Call</PageTitle>
      <QueryView query={call} loadingLabel="Loading the call…">
        {(data) => (
          <div className="stack">
            <section aria-labelledby="summary-heading" className="panel">
              <h2 id="summary-heading">Summary</h2>
              <Summary call={data} />
              <p>
                Agent: <Link href={`/agents/${data.agent_id}`}>{data.agent_id}</Link>
              </p>
            </section>
            <CallControls call={data} />
            <section aria-labelledby="recording-heading" className="panel">
              <h2 id="recording-heading">Recording</h2>
              <Recording call={data} refetch={() => void call.refetch()} />
            </section>
            <section aria-labelledby="transcript-heading" className="panel">
              <h2 id="transcript-heading">Transcript</h2>
              <CallTranscript call={data} />
            </section>
            <section aria-labelledby="extracted-heading" className="panel">
              <h2 id="extracted-heading">Extracted fields</h2>
              <Extracted call={data} />
            </section>
            <section aria-labelledby="timeline-heading" className="panel">
              <h2 id="timeline-heading">Status history</h2>
              <Timeline id={id} status={data.status} />
            </section>
            <CallDeliveries call={data} />
          </div>
        )}
      </QueryView>
    </>
  );
}
