import type { Generated, Selectable } from 'kysely';
import type { Json, Timestamp } from '../../platform/db/foundation-tables.ts';

// Tables of calls (migration 0006): the call rows and their state history. The CallJournal
// (journal.ts) is the only writer of both.

export const CALL_STATUSES = ['queued', 'ringing', 'in_progress', 'completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export const LIVE_STATUSES = ['ringing', 'in_progress'] as const satisfies readonly CallStatus[];
export const TERMINAL_STATUSES = ['completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled'] as const satisfies readonly CallStatus[];

export const END_REASONS = [
  'busy',
  'no_answer',
  'failed_to_connect',
  'caller_goodbye',
  'customer_hangup',
  'agent_end_call',
  'transferred',
  'voicemail',
  'media_error',
  'api_hangup',
  'max_duration',
  'insufficient_balance',
  'silence_timeout',
] as const;
export type EndReason = (typeof END_REASONS)[number];

export const CALL_DIRECTIONS = ['inbound', 'outbound', 'web'] as const;
export type CallDirection = (typeof CALL_DIRECTIONS)[number];

import type { CallLatency, TranscriptEntry } from '../../runtime/outcome.ts';

export type { CallLatency, TranscriptEntry };

import type { CallSimulation } from '../../ports/telephony.ts';

export type { CallSimulation };

/** A post-call step (DESIGN part 9): null when the call has none (no audio, never answered). */
export const POST_CALL_STATUSES = ['pending', 'ready', 'failed'] as const;
export type PostCallStatus = (typeof POST_CALL_STATUSES)[number];

export type CallControl = { action: 'hangup' } | { action: 'transfer'; to: string };

export interface CallsTable {
  id: string;
  workspace_id: string;
  agent_id: string;
  direction: CallDirection;
  from_number: string | null;
  to_number: string | null;
  status: CallStatus;
  end_reason: EndReason | null;
  /** `sandbox`, `twilio`, `web`. */
  provider: string;
  provider_call_id: string | null;
  started_at: Timestamp | null;
  answered_at: Timestamp | null;
  ended_at: Timestamp | null;
  duration_ms: number | null;
  billed_seconds: Generated<number>;
  cost_micros: Generated<number>;
  transcript: Json<TranscriptEntry[]>;
  extracted: Json<Record<string, unknown>>;
  variables: Json<Record<string, string>>;
  metadata: Json<Record<string, unknown>>;
  simulation: Json<CallSimulation> | null;
  latency: Json<CallLatency> | null;
  error: Json<{ code: string; message: string }> | null;
  campaign_id: string | null;
  schedule_id: string | null;
  transferred_to: string | null;
  /** The BlobStore key of the MP3 recording. */
  recording_key: string | null;
  recording_bytes: number | null;
  content_deleted_at: Timestamp | null;
  /** The MP3 (migration 0014): pending while the post-call job encodes the raw tracks; null for a call without audio. */
  recording_status: PostCallStatus | null;
  recording_error: string | null;
  /** Samples of the raw tracks written during the call (recordings/raw/<workspace>/<call>/…). */
  recording_samples: number | null;
  /** Extraction: pending until the post-call job ran it; null for a call never answered. */
  analysis_status: PostCallStatus | null;
  analysis_error: string | null;
  post_call_attempts: Generated<number>;
  /** When the post-call job is next due; null once call.ended was emitted. */
  post_call_due_at: Timestamp | null;
  post_call_lease_holder: string | null;
  post_call_lease_expires_at: Timestamp | null;
  /** When call.ended and the outcome event were emitted (once). */
  ended_event_at: Timestamp | null;
  /** W3C traceparent of the request that queued the call (null when tracing is off). */
  trace_parent: string | null;
  lease_holder: string | null;
  lease_expires_at: Timestamp | null;
  last_renewed_at: Timestamp | null;
  /** The live call's length on its own clock at the last renewal (what a lost call is billed). */
  live_elapsed_ms: number | null;
  /** A hang-up or transfer asked for while another instance runs the call; applied by its owner. */
  control: Json<CallControl> | null;
  /** SHA-256 of the single-use token a Twilio Media Stream presents for this call; null once used. */
  stream_token_hash: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A call row as read (the routes present it through the reads and the service). */
export type CallRow = Selectable<CallsTable>;

export interface CallStatusEventsTable {
  call_id: string;
  seq: number;
  status: CallStatus;
  at: Timestamp;
}

export interface CallTables {
  calls: CallsTable;
  call_status_events: CallStatusEventsTable;
}

