import { createRequire } from 'node:module';
import type * as LiveKit from 'livekit-server-sdk';
import type { RealtimeHealth, RealtimeMediaProvider, RoomGrant } from '../../ports/realtime-media.ts';

// LiveKit rooms for voice sessions, through livekit-server-sdk: the RoomService API (Twirp JSON
// over HTTP, each call signed with a short-lived server token) and the client access tokens (JWT,
// HS256 with the API secret, iss = the API key). The SDK turns a ws:// or wss:// LIVEKIT_URL into
// the http:// or https:// host it calls, so one URL serves clients and this adapter.

const require = createRequire(import.meta.url);
let sdk: typeof LiveKit | undefined;
/**
 * livekit-server-sdk, loaded when the adapter is built (its CommonJS build, synchronously): a
 * deployment without LIVEKIT_* never loads it (docs/decisions.md, "Start-up").
 */
function liveKitSdk(): typeof LiveKit {
  sdk ??= require('livekit-server-sdk') as typeof LiveKit;
  return sdk;
}

export interface LiveKitMediaOptions {
  /** LIVEKIT_URL: what clients connect to (ws:// or wss://; http(s):// works too). */
  url: string;
  apiKey: string;
  apiSecret: string;
  /** Bound on each RoomService request, the health check included (default 5 s). */
  timeoutMs?: number;
  /**
   * Clock skew tolerated when verifying a token's expiry and not-before (default 5 s): tokens are
   * minted with nbf = now, and another instance of this server may run a little behind.
   */
  clockToleranceSeconds?: number;
}

/** A RoomService call the server refused (its Twirp error code and HTTP status), or that failed on the way. */
export class LiveKitApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly code: string | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LiveKitApiError';
  }
}

/** A room name no session uses: health lists it by name so the check stays cheap on a busy server. */
const HEALTH_PROBE_ROOM = '__health_probe__';

function twirpCode(error: unknown): string | undefined {
  return error instanceof liveKitSdk().ServerError ? error.code : undefined;
}

function apiError(operation: string, error: unknown): LiveKitApiError {
  if (error instanceof liveKitSdk().ServerError) {
    const code = error.code ?? null;
    return new LiveKitApiError(`LiveKit ${operation} refused: ${error.status} ${code ?? ''} ${error.message}`.replace(/\s+/g, ' ').trim(), error.status, code, { cause: error });
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new LiveKitApiError(`LiveKit ${operation} failed: ${reason}`, null, null, { cause: error });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

function checkGrant(grant: RoomGrant) {
  // The SDK reads a TTL of 0 as "use the default" (6 hours), and an empty room in a join grant
  // names no room at all: both would hand out more than was asked for.
  if (!Number.isInteger(grant.ttlSeconds) || grant.ttlSeconds <= 0) throw new RangeError(`ttlSeconds must be a positive integer, got ${grant.ttlSeconds}`);
  if (!grant.roomName) throw new RangeError('roomName is required');
  if (!grant.identity) throw new RangeError('identity is required');
}

export function createLiveKitMedia(options: LiveKitMediaOptions): RealtimeMediaProvider {
  const { url, apiKey, apiSecret } = options;
  const timeoutMs = options.timeoutMs ?? 5000;
  const clockTolerance = options.clockToleranceSeconds ?? 5;
  // The SDK's time-out is in seconds. Region failover (LiveKit Cloud hosts only) is off for health:
  // its retries would outlast the time-out the check promises.
  const { AccessToken, RoomServiceClient, TokenVerifier } = liveKitSdk();
  const rooms = new RoomServiceClient(url, apiKey, apiSecret, { requestTimeout: timeoutMs / 1000 });
  const probe = new RoomServiceClient(url, apiKey, apiSecret, { requestTimeout: timeoutMs / 1000, failover: false });
  const verifier = new TokenVerifier(apiKey, apiSecret);
  let rtcLoaded = false;

  return {
    name: 'livekit',
    url,

    async createRoom(roomName, { emptyTimeoutSeconds, maxParticipants }) {
      try {
        await rooms.createRoom({ name: roomName, emptyTimeout: emptyTimeoutSeconds, maxParticipants });
      } catch (error) {
        // LiveKit answers an existing room with the room itself; a proxy or an older server may say so instead.
        if (twirpCode(error) === 'already_exists') return;
        throw apiError('CreateRoom', error);
      }
    },

    async mintToken(grant) {
      checkGrant(grant);
      const token = new AccessToken(apiKey, apiSecret, { identity: grant.identity, ttl: grant.ttlSeconds });
      // Join and media rights in this one room; no roomCreate, roomList or roomAdmin.
      token.addGrant({ roomJoin: true, room: grant.roomName, canPublish: true, canSubscribe: true });
      return token.toJwt();
    },

    async verifyToken(token) {
      let claims: Awaited<ReturnType<LiveKit.TokenVerifier['verify']>>;
      try {
        claims = await verifier.verify(token, clockTolerance);
      } catch {
        return null;
      }
      const room = claims.video?.roomJoin === true ? claims.video.room : undefined;
      if (typeof room !== 'string' || room === '' || typeof claims.sub !== 'string' || claims.sub === '') return null;
      return { identity: claims.sub, roomName: room };
    },

    async deleteRoom(roomName) {
      try {
        await rooms.deleteRoom(roomName);
      } catch (error) {
        // Already gone: the empty timeout closed it, or an earlier delete did.
        if (twirpCode(error) === 'not_found') return;
        throw apiError('DeleteRoom', error);
      }
    },

    async health(): Promise<RealtimeHealth> {
      const started = performance.now();
      try {
        await withTimeout(probe.listRooms([HEALTH_PROBE_ROOM]), timeoutMs);
        return { provider: 'livekit', configured: true, reachable: true, latency_ms: Math.round(performance.now() - started) };
      } catch {
        // Refused credentials count as unreachable: the rooms cannot be used either way.
        return { provider: 'livekit', configured: true, reachable: false, latency_ms: null };
      }
    },

    async joinAsAgent(token) {
      // @livekit/rtc-node (a native module) is loaded only here, by the first agent that joins.
      const { joinLiveKitRoom } = await import('./livekit-audio.ts');
      rtcLoaded = true;
      return joinLiveKitRoom({ url, token });
    },

    async dispose() {
      if (!rtcLoaded) return;
      const { dispose } = await import('@livekit/rtc-node');
      await dispose();
    },
  };
}
