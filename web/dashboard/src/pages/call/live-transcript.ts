import type { TranscriptEntry } from '../../../../../sdks/typescript/src/index.ts';
import { callIdOfPayload } from './delivery-match.ts';

// A live call's transcript so far. The call's row gets its transcript when the call ends; while
// it runs, each utterance is a `call.transcript` event (listing A: `data {role, text, start_ms,
// end_ms, turn}`), sent when the agent or the workspace has a webhook: the lines are read back
// from those events' deliveries.

export function transcriptFromEvents(payloads: Array<Record<string, unknown>>, callId: string): TranscriptEntry[] {
  const lines = new Map<string, TranscriptEntry>();
  for (const payload of payloads) {
    if (callIdOfPayload(payload) !== callId) continue;
    const data = payload.data as Partial<TranscriptEntry> | undefined;
    if (!data || (data.role !== 'agent' && data.role !== 'user') || typeof data.text !== 'string') continue;
    const entry: TranscriptEntry = { role: data.role, text: data.text, start_ms: Number(data.start_ms ?? 0), end_ms: Number(data.end_ms ?? 0) };
    // The same event reaches the agent's and the workspace's webhooks: one line each.
    lines.set(`${entry.role}-${entry.start_ms}`, entry);
  }
  return [...lines.values()].sort((a, b) => a.start_ms - b.start_ms);
}
