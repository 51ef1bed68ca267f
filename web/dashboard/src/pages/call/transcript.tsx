import type { TranscriptEntry } from '@voice-agent-platform/sdk';
import { clock } from '../../ui/format.ts';
import { Empty } from '../../ui/states.tsx';

// A call's transcript: each turn's time, speaker, words and latency.

export function Transcript({ turns, live = false }: { turns: TranscriptEntry[]; live?: boolean }) {
  if (turns.length === 0) return <Empty title={live ? 'Nothing said yet.' : 'Nothing was said.'} />;
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
