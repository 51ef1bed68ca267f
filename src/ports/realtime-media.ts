// The voice module's port to a real-time media provider for browser and app sessions: the built-in
// media WebSocket (GET /v1/media/stream?token=), or LiveKit rooms when LIVEKIT_* is set
// (src/providers/media/livekit.ts). The agent's side of a LiveKit room is bridged into the same
// call session as every call.
import type { MediaStream } from './media.ts';

export interface RoomGrant {
  /** The room's name (one per voice session). */
  roomName: string;
  /** Who the token is for (the session's external_user_id). */
  identity: string;
  ttlSeconds: number;
}

export interface RealtimeHealth {
  provider: 'builtin' | 'livekit';
  configured: boolean;
  reachable: boolean | null;
  latency_ms: number | null;
}

export interface RealtimeMediaProvider {
  readonly name: 'livekit';
  /** The URL clients connect to (LIVEKIT_URL). */
  readonly url: string;
  /** Creates the session's room (empty timeout bounded), idempotent. */
  createRoom(roomName: string, options: { emptyTimeoutSeconds: number; maxParticipants: number }): Promise<void>;
  /** A client access token for `identity`, allowed to join `roomName` only, valid `ttlSeconds`. */
  mintToken(grant: RoomGrant): Promise<string>;
  /** The grant a token carries when it is valid (signature, expiry); null otherwise. */
  verifyToken(token: string): Promise<{ identity: string; roomName: string } | null>;
  /** Removes the room (ends the session for every participant). */
  deleteRoom(roomName: string): Promise<void>;
  health(): Promise<RealtimeHealth>;
  /**
   * Joins a room as the agent participant with `token` (minted for that room): its audio as the
   * runtime's MediaStream. The real-time SDK loads here, on first use.
   */
  joinAsAgent(token: string): Promise<MediaStream>;
  /** Releases what joining loaded (LiveKit's native side keeps the process alive until then); nothing when nobody joined. */
  dispose(): Promise<void>;
}
