import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../platform/http/schemas.ts';
import { microsToUsd } from '../../platform/money.ts';
import type { Executor } from '../../platform/db/schema.ts';
import type { RealtimeMediaProvider } from '../../ports/realtime-media.ts';
import type { CallFigures } from '../calls/figures.ts';
import type { VoiceSessionRow } from './service.ts';
import { SESSION_END_REASONS, SESSION_STATUSES } from './tables.ts';

// The voice-session object as every route answers it (the voice routes, a widget's POST /voice).

const SessionFields = {
  id: Type.String({ description: 'vs_…' }),
  room_name: Type.String(),
  agent_id: Type.String(),
  external_user_id: Type.String(),
  call_id: Type.String({ description: 'The call of direction web: transcript, recording, latency and cost' }),
  url: Type.String({ description: 'Where the client connects: the media WebSocket (add ?token=) or the LiveKit server' }),
  transport: Type.Enum(['builtin', 'livekit']),
  status: Type.Enum(SESSION_STATUSES),
  end_reason: Nullable(Type.Enum(SESSION_END_REASONS)),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  expires_at: Timestamp,
  connected_at: Nullable(Timestamp),
  ended_at: Nullable(Timestamp),
  duration_sec: Type.Number({ description: 'Connected time, seconds (decimal)' }),
  cost_usd: Type.Number(),
  created_at: Timestamp,
};
export const VoiceSession = Type.Object(SessionFields, { title: 'VoiceSession' });
export const VoiceSessionCreated = Type.Object(
  { ...SessionFields, token: Type.String({ description: 'Shown once: the media token (built-in) or the LiveKit access token' }) },
  { title: 'VoiceSessionCreated' },
);

export interface SessionPresenterDeps {
  db: Executor;
  /** The calls module's figures: a session's connected time and cost are its call's. */
  callFigures: Pick<CallFigures, 'durationAndCost'>;
  /** LiveKit, when configured: a LiveKit session's url is its server's. */
  realtime?: RealtimeMediaProvider;
  /** The built-in media WebSocket's url. */
  mediaUrl: string;
}

export function createSessionPresenter({ db, callFigures: figures, realtime, mediaUrl }: SessionPresenterDeps) {

  type CallFigures = { duration_ms: number | null; cost_micros: number | string | null };

  /** The connected time and cost of each session's call, read in one query for a page of sessions. */
  async function callFigures(rows: VoiceSessionRow[]): Promise<Map<string, CallFigures>> {
    if (rows.length === 0) return new Map();
    const calls = await figures.durationAndCost(db, [...new Set(rows.map((r) => r.workspace_id))], rows.map((r) => r.call_id));
    return new Map(calls.map((c) => [c.id, c]));
  }

  async function present(row: VoiceSessionRow, figures?: Map<string, CallFigures>) {
    const call = (figures ?? (await callFigures([row]))).get(row.call_id);
    return {
      id: row.id,
      room_name: row.room_name,
      agent_id: row.agent_id,
      external_user_id: row.external_user_id,
      call_id: row.call_id,
      url: row.transport === 'livekit' && realtime ? realtime.url : mediaUrl,
      transport: row.transport as 'builtin' | 'livekit',
      status: row.status,
      end_reason: row.end_reason,
      metadata: row.metadata as Record<string, unknown>,
      expires_at: new Date(row.expires_at).toISOString(),
      connected_at: row.connected_at ? new Date(row.connected_at).toISOString() : null,
      ended_at: row.ended_at ? new Date(row.ended_at).toISOString() : null,
      duration_sec: (call?.duration_ms ?? 0) / 1000,
      cost_usd: microsToUsd(Number(call?.cost_micros ?? 0)),
      created_at: new Date(row.created_at).toISOString(),
    };
  }

  return { present, callFigures };
}
