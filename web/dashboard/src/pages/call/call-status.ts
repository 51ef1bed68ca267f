import type { Call } from '../../../../../sdks/typescript/src/index.ts';

// Where a call is in its life: ended calls never change; live ones can be hung up, a call in
// progress transferred; a call is followed (polled) until it and its post-call work are done.

const TERMINAL = new Set<Call['status']>(['completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled']);

export const hasEnded = (call: Pick<Call, 'status'>) => TERMINAL.has(call.status);

/** Still being worked on: live, or its recording or extraction still pending. */
export const settling = (call: Pick<Call, 'status' | 'recording_status' | 'analysis_status'>) => !hasEnded(call) || call.recording_status === 'pending' || call.analysis_status === 'pending';

/** What the API lets one do to the call now (POST /hangup, POST /transfer). */
export function controlsOf(call: Pick<Call, 'status'>): { hangUp: 'hang_up' | 'cancel' | null; transfer: boolean } {
  if (call.status === 'in_progress') return { hangUp: 'hang_up', transfer: true };
  if (call.status === 'queued' || call.status === 'ringing') return { hangUp: 'cancel', transfer: false };
  return { hangUp: null, transfer: false };
}
