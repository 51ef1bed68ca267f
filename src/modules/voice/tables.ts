import type { Json, Timestamp } from '../../platform/db/foundation-tables.ts';

// Tables of voice sessions (migration 0009).

export const SESSION_STATUSES = ['active', 'ended'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Why a session ended, as the media protocol's `end` message and the session say it. */
export const SESSION_END_REASONS = ['client_closed', 'api_end', 'idle_timeout', 'agent_end_call', 'max_duration', 'insufficient_balance', 'media_error'] as const;
export type SessionEndReason = (typeof SESSION_END_REASONS)[number];

export interface VoiceSessionsTable {
  id: string;
  workspace_id: string;
  agent_id: string;
  /** The call of direction `web` that carries transcript, recording, latency and cost. */
  call_id: string;
  room_name: string;
  external_user_id: string;
  metadata: Json<Record<string, unknown>>;
  /** `builtin` (the media WebSocket) or `livekit`. */
  transport: string;
  /** SHA-256 of the built-in media token (LiveKit tokens are verified by signature). */
  token_hash: string;
  status: SessionStatus;
  end_reason: SessionEndReason | null;
  expires_at: Timestamp;
  connected_at: Timestamp | null;
  ended_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface VoiceTables {
  voice_sessions: VoiceSessionsTable;
}
