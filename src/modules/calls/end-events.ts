import type { CallRow } from './repo.ts';
import type { CallStatus, TranscriptEntry } from './tables.ts';

// A call's last events, built from its row once the post-call work has settled (DESIGN part 9):
// call.ended (listing A) and the listing-B outcome, with the recording link and what was extracted.

export interface CallLinks {
  recordingUrl(callId: string): string;
  transcriptUrl(callId: string): string;
}

/** Listing-B event of a terminal state (canceled calls get none). */
const OUTCOME_EVENT: Partial<Record<CallStatus, string>> = {
  completed: 'call.completed',
  voicemail: 'call.completed',
  transferred: 'call.transferred',
  busy: 'call.failed',
  no_answer: 'call.failed',
  failed: 'call.failed',
};

export function endEventsOf(row: CallRow, links: CallLinks): Array<{ type: string; data: Record<string, unknown> }> {
  const events = [
    {
      type: 'call.ended',
      data: {
        duration_ms: row.duration_ms ?? 0,
        status: row.status,
        end_reason: row.end_reason,
        transcript_url: links.transcriptUrl(row.id),
        recording_url: row.recording_key ? links.recordingUrl(row.id) : null,
        cost_usd: Number(row.cost_micros) / 1e6,
        latency: row.latency ?? null,
      } as Record<string, unknown>,
    },
  ];
  const outcome = OUTCOME_EVENT[row.status];
  const base = { call_id: row.id, agent_id: row.agent_id, from: row.from_number, to: row.to_number };
  if (outcome === 'call.completed') {
    const text = ((row.transcript ?? []) as TranscriptEntry[]).map((e) => `${e.role}: ${e.text}`).join('\n');
    events.push({ type: outcome, data: { ...base, duration_seconds: row.billed_seconds, transcript: text, extracted: row.extracted ?? {} } });
  } else if (outcome === 'call.transferred') {
    events.push({ type: outcome, data: { ...base, transferred_to: row.transferred_to ?? null, reason: row.end_reason } });
  } else if (outcome === 'call.failed') {
    events.push({ type: outcome, data: { ...base, status: row.status, end_reason: row.end_reason } });
  }
  return events;
}
