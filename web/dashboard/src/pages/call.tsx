import { useQuery } from '@tanstack/react-query';
import type { Call, TranscriptEntry } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Link } from 'wouter';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button } from '../ui/form.tsx';
import { clock, dateTime, label, usd } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';

// One call: its status and history, the recording, the transcript with each turn's time and
// latency, the extracted fields and the cost. Polled while the call or its post-call work
// (recording, extraction) is still going.

const TERMINAL = new Set(['completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled']);
const settling = (call: Call) => !TERMINAL.has(call.status) || call.recording_status === 'pending' || call.analysis_status === 'pending';

/** The signed recording link on this origin (the platform names its public address, which a proxy may rewrite). */
function sameOrigin(url: string): string {
  const parsed = new URL(url, location.origin);
  return `${parsed.pathname}${parsed.search}`;
}

function Recording({ call, refetch }: { call: Call; refetch(): void }) {
  const [failed, setFailed] = useState(false);
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

function Transcript({ turns }: { turns: TranscriptEntry[] }) {
  if (turns.length === 0) return <Empty title="Nothing was said." />;
  return (
    <div className="table-wrap">
      <table className="transcript">
        <caption className="visually-hidden">Transcript</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Speaker</th>
            <th scope="col">Said</th>
            <th scope="col">Latency</th>
          </tr>
        </thead>
        <tbody>
          {turns.map((turn) => (
            <tr key={`${turn.role}-${turn.start_ms}`} className={`turn-${turn.role}`}>
              <td>{clock(turn.start_ms)}</td>
              <td>{turn.role === 'agent' ? 'Agent' : 'Caller'}</td>
              <td>
                {turn.text}
                {turn.interrupted ? <span className="hint"> (interrupted)</span> : null}
              </td>
              <td>{turn.latency_ms !== undefined ? `${turn.latency_ms} ms` : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
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

function Timeline({ id }: { id: string }) {
  const { api } = useWorkspace();
  const events = useQuery({ queryKey: useKey('call-events', id), queryFn: async () => (await api.calls.events(id)).data });
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
            <section aria-labelledby="recording-heading" className="panel">
              <h2 id="recording-heading">Recording</h2>
              <Recording call={data} refetch={() => void call.refetch()} />
            </section>
            <section aria-labelledby="transcript-heading" className="panel">
              <h2 id="transcript-heading">Transcript</h2>
              <Transcript turns={data.transcript} />
            </section>
            <section aria-labelledby="extracted-heading" className="panel">
              <h2 id="extracted-heading">Extracted fields</h2>
              <Extracted call={data} />
            </section>
            <section aria-labelledby="timeline-heading" className="panel">
              <h2 id="timeline-heading">Status history</h2>
              <Timeline id={id} />
            </section>
          </div>
        )}
      </QueryView>
    </>
  );
}
