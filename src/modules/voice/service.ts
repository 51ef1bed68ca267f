import type { Socket } from 'node:net';
import type { Selectable } from 'kysely';
import type { WebSocket } from 'ws';
import { invalidState, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { pageRequest, toPage } from '../../platform/pagination.ts';
import { microsToUsd } from '../../platform/money.ts';
import type { Platform } from '../../platform/platform.ts';
import { randomToken, sha256Hex } from '../../platform/secrets.ts';
import type { SpeechToText } from '../../ports/stt.ts';
import type { FinishedCall } from '../calls/journal.ts';
import type { CallsModule } from '../calls/module.ts';
import { requireCallAgent, requireFunds } from '../calls/preconditions.ts';
import { createMediaSocketStream, protocolReason } from './media-socket.ts';
import { createMediaWriter } from './media-writer.ts';
import type { RealtimeMediaProvider } from '../../ports/realtime-media.ts';
import { createSessionPresenter } from './present.ts';
import type { SessionEndReason, SessionStatus, VoiceSessionsTable } from './tables.ts';

/** GET /v1/voice/sessions's query. */
export interface SessionListQuery {
  limit?: number;
  cursor?: string;
  agent_id?: string;
  external_user_id?: string;
  status?: SessionStatus;
}

// Voice sessions: a headless session with an agent for a browser or an app. Each is carried by a
// call of direction `web` (queued until the first media connection, so a session nobody joined
// costs nothing), run by the same call session as phone calls. Its end (client, POST /end, idle,
// the agent, the wallet) is written by the call journal's finishing transaction, which also sends
// `voice_session.ended`.

export type VoiceSessionRow = Selectable<VoiceSessionsTable>;

/** Recognises nothing: audio without STT_BASE_URL is heard by the VAD but never understood (typed text still works). */
const deafStt: SpeechToText = { transcribe: async () => '' };
/** The session's recogniser: the deployment's (streaming or batch, chosen by the call runner), or none that hears (typed text only). */
const recogniserOf = (providers: { stt?: SpeechToText; streamingStt?: unknown }) => (providers.stt || providers.streamingStt ? undefined : deafStt);

/** How long POST /end waits for a live call run here to be written as ended. */
const END_WAIT_MS = 5000;

export interface VoiceDeps {
  platform: Platform;
  calls: CallsModule;
  realtime?: RealtimeMediaProvider;
}

export function createVoiceService(deps: VoiceDeps) {
  const { platform, calls, realtime } = deps;
  const { db, clock, config } = platform;
  const mediaUrl = `${config.publicBaseUrl.replace(/^http/, 'ws')}/v1/media/stream`;
  const sessions = createSessionPresenter({ db, callFigures: calls.figures, realtime, mediaUrl });
  // The built-in media sockets' agent audio is written off the event loop (its thread starts with the first socket).
  const writer =
    config.mediaLeadMs > 0 ? createMediaWriter({ onError: (error) => platform.logger.error({ err: error }, 'the media writer thread failed; media sockets are written on the event loop') }) : null;

  async function sessionOf(workspaceId: string, id: string): Promise<VoiceSessionRow> {
    const row = await db.selectFrom('voice_sessions').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('voice session');
    return row;
  }

  /** A session's call row (the calls module reads it); it exists as long as its session does. */
  async function callOfSession(session: VoiceSessionRow) {
    const call = await calls.reads.row(session.call_id);
    if (!call) throw new Error(`voice session ${session.id}: its call ${session.call_id} is missing`);
    return call;
  }

  /** The journal's finishing transaction of a web call ends its session and sends voice_session.ended. */
  calls.journal.onFinish(async (tx, call, finished: FinishedCall) => {
    if (call.direction !== 'web') return;
    const reason: SessionEndReason = finished.status === 'canceled' && finished.endReason === 'silence_timeout' ? 'idle_timeout' : protocolReason(finished.endReason);
    const session = await tx
      .updateTable('voice_sessions')
      .set({ status: 'ended', end_reason: reason, ended_at: finished.endedAt, updated_at: finished.endedAt })
      .where('call_id', '=', call.id)
      .where('status', '=', 'active')
      .returningAll()
      .executeTakeFirst();
    if (!session) return;
    await platform.events.emit(tx, {
      workspaceId: session.workspace_id,
      type: 'voice_session.ended',
      agentId: session.agent_id,
      callId: call.id,
      tenantOnly: true,
      traceParent: call.traceParent,
      data: {
        session_id: session.id,
        room_name: session.room_name,
        agent_id: session.agent_id,
        external_user_id: session.external_user_id,
        duration_sec: finished.durationMs / 1000,
        cost_usd: microsToUsd(finished.costMicros),
        ended_at: finished.endedAt.toISOString(),
        end_reason: reason,
      },
    });
  });

  /**
   * `builtin`: the session uses the built-in media WebSocket even when LiveKit is configured (the
   * widget's dependency-free script speaks only that protocol).
   */
  /** `traceParent`: the creating request's trace, which the session's call joins. */
  async function create(
    workspaceId: string,
    body: { agent_id: string; external_user_id?: string; metadata?: Record<string, unknown> },
    options: { builtin?: boolean; traceParent?: string | null } = {},
  ) {
    const room = options.builtin ? undefined : realtime;
    const agent = await requireCallAgent(db, workspaceId, body.agent_id);
    await requireFunds(db, workspaceId, 'start voice sessions');
    const id = newId('vs');
    const externalUserId = body.external_user_id ?? `anonymous-${id.slice(-8)}`;
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + config.mediaTokenTtlSeconds * 1000);
    let token: string;
    if (room) {
      await room.createRoom(id, { emptyTimeoutSeconds: config.mediaTokenTtlSeconds, maxParticipants: 2 });
      token = await room.mintToken({ roomName: id, identity: externalUserId, ttlSeconds: config.mediaTokenTtlSeconds });
    } else {
      token = randomToken('mt_', 32);
    }
    const callId = newId('call');
    await db.transaction().execute(async (tx) => {
      await calls.journal.queue(tx, {
        id: callId,
        workspace_id: workspaceId,
        agent_id: agent.id,
        direction: 'web',
        from_number: externalUserId,
        to_number: null,
        provider: room ? 'livekit' : 'web',
        metadata: body.metadata ?? {},
        simulation: null,
        traceParent: options.traceParent ?? null,
      });
      await tx
        .insertInto('voice_sessions')
        .values({
          id,
          workspace_id: workspaceId,
          agent_id: agent.id,
          call_id: callId,
          room_name: id,
          external_user_id: externalUserId,
          metadata: JSON.stringify(body.metadata ?? {}),
          transport: room ? 'livekit' : 'builtin',
          token_hash: sha256Hex(token),
          status: 'active',
          expires_at: expiresAt,
          created_at: now,
          updated_at: now,
        })
        .execute();
    });
    const row = await sessionOf(workspaceId, id);
    if (room && config.livekit.agentJoins) void joinRoomAsAgent(row).catch((error) => platform.logger.error({ err: error, sessionId: id }, 'the agent could not join the LiveKit room'));
    return { row, token };
  }

  /**
   * LiveKit mode: the agent joins the session's room as a participant (the real-time SDK loads
   * then), its audio bridged into the call session; the call starts when it has joined.
   */
  async function joinRoomAsAgent(session: VoiceSessionRow) {
    if (!realtime) return;
    const token = await realtime.mintToken({ roomName: session.room_name, identity: `agent-${session.agent_id}`, ttlSeconds: config.mediaTokenTtlSeconds });
    const stream = await realtime.joinAsAgent(token);
    const call = await callOfSession(session);
    await db.updateTable('voice_sessions').set({ connected_at: clock.now() }).where('id', '=', session.id).execute();
    if (!(await calls.journal.ring(call, calls.runner.holder, config.calls.leaseMs))) return stream.close();
    const ringing = await callOfSession(session);
    const leave = async () => {
      stream.close();
      await realtime.deleteRoom(session.room_name).catch(() => undefined);
    };
    void calls.runner.answer(ringing, { stream, stt: recogniserOf(platform.providers), answeredBy: 'human', transfer: leave, hangup: leave });
  }

  /** Stops the media writer's thread; releases the real-time SDK's native side, which keeps the process alive until disposed. */
  async function close() {
    await writer?.close();
    await realtime?.dispose();
  }

  /** The session a built-in media token opens, when it may connect now (active, unexpired, not yet connected). */
  async function sessionForToken(token: string): Promise<VoiceSessionRow | null> {
    const row = await db.selectFrom('voice_sessions').selectAll().where('token_hash', '=', sha256Hex(token)).where('transport', '=', 'builtin').executeTakeFirst();
    if (row?.status !== 'active' || row.connected_at || new Date(row.expires_at) <= clock.now()) return null;
    return row;
  }

  /** A client connected with a valid token: the session's call starts, run here. */
  async function connect(session: VoiceSessionRow, socket: WebSocket, tcp?: Socket): Promise<void> {
    const stream = createMediaSocketStream(socket, writer && tcp ? { writer: { writer, socket: tcp, leadMs: config.mediaLeadMs } } : {});
    const claimed = await db.updateTable('voice_sessions').set({ connected_at: clock.now() }).where('id', '=', session.id).where('connected_at', 'is', null).executeTakeFirst();
    const call = await calls.reads.row(session.call_id);
    if (Number(claimed.numUpdatedRows) !== 1 || !call || !(await calls.journal.ring(call, calls.runner.holder, config.calls.leaseMs))) {
      stream.end('api_end');
      return;
    }
    const ringing = await callOfSession(session);
    void calls.runner.answer(ringing, {
      stream,
      stt: recogniserOf(platform.providers),
      answeredBy: 'human',
      // A browser cannot follow a transfer: the session ends.
      transfer: async () => stream.end('agent_end_call'),
      hangup: async (reason) => stream.end(protocolReason(reason)),
    });
  }

  /** Ends a session: a call not yet connected is canceled (cost 0); a live one hangs up. Answers it once ended (or still ending). */
  async function end(workspaceId: string, id: string): Promise<VoiceSessionRow> {
    const session = await sessionOf(workspaceId, id);
    if (session.status === 'ended') throw invalidState('The voice session has already ended.');
    const call = await callOfSession(session);
    if (call.status === 'queued') {
      await calls.journal.finish(call, null, { status: 'canceled', endReason: 'api_hangup', durationMs: 0 });
    } else {
      await calls.service.hangup(workspaceId, call.id);
      // The session ends when its call does (the runner finishes it; the recording follows in the post-call job). Run here:
      // answered once that is written (at most a few seconds); run elsewhere: answered as it is now.
      const ended = calls.runner.ended(call.id);
      if (ended) await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, END_WAIT_MS).unref())]);
    }
    return sessionOf(workspaceId, id);
  }

  /** Sessions whose token expired before anyone connected: ended as idle, at no cost. */
  async function endExpired(): Promise<number> {
    const expired = await db
      .selectFrom('voice_sessions')
      .innerJoin('calls', 'calls.id', 'voice_sessions.call_id')
      .selectAll('calls')
      .where('voice_sessions.status', '=', 'active')
      .where('voice_sessions.expires_at', '<', clock.now())
      .where('calls.status', '=', 'queued')
      .limit(100)
      .execute();
    let ended = 0;
    for (const call of expired) if (await calls.journal.finish(call, null, { status: 'canceled', endReason: 'silence_timeout', durationMs: 0 })) ended++;
    return ended;
  }

  /** Starts the media writer's thread before the first media socket needs it (the served process does, once listening). */
  const prepareMedia = () => writer?.start();

  /** The media writer's figures since the last call (null without its thread). */
  const mediaWriterStats = () => writer?.stats() ?? Promise.resolve(null);

  /** The workspace's sessions as the API answers them (their calls' figures read in one query), newest first, by cursor, filtered by agent, end user and status. */
  async function list(workspaceId: string, query: SessionListQuery) {
    const page = pageRequest(query);
    let rows = db.selectFrom('voice_sessions').selectAll().where('workspace_id', '=', workspaceId);
    if (query.agent_id) rows = rows.where('agent_id', '=', query.agent_id);
    if (query.external_user_id) rows = rows.where('external_user_id', '=', query.external_user_id);
    if (query.status) rows = rows.where('status', '=', query.status);
    if (page.after) rows = rows.where('id', '<', page.after);
    const listed = toPage(await rows.orderBy('id', 'desc').limit(page.limit + 1).execute(), page, (r) => r.id, (r) => r);
    const figures = await sessions.callFigures(listed.data);
    return { ...listed, data: await Promise.all(listed.data.map((row) => sessions.present(row, figures))) };
  }

  /** A session as the API answers it (with its call's connected time and cost). */
  const present = (row: VoiceSessionRow) => sessions.present(row);

  /** The session's transcript: its call's. */
  async function transcriptOf(workspaceId: string, id: string) {
    const session = await sessionOf(workspaceId, id);
    const call = await callOfSession(session);
    return { session_id: session.id, call_id: session.call_id, transcript: call.transcript as never };
  }

  /** GET /v1/media/health: the real-time media (LiveKit, else the built-in WebSocket) and the engines behind calls. */
  async function mediaHealth() {
    const [engines, live] = await Promise.all([
      platform.providers.mediaHealth({ timeoutMs: 3000 }),
      realtime ? realtime.health() : Promise.resolve({ provider: 'builtin' as const, configured: true, reachable: true, latency_ms: 0 }),
    ]);
    return { ...live, engines: engines as unknown as Record<string, unknown> };
  }

  return { create, sessionOf, present, list, transcriptOf, sessionForToken, connect, end, endExpired, close, mediaUrl, prepareMedia, mediaWriterStats, mediaHealth };
}

export type VoiceService = ReturnType<typeof createVoiceService>;
