import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { unauthorized } from '../../platform/errors.ts';
import { IdParams, ListOf, Nullable, Timestamp } from '../../platform/http/schemas.ts';
import { microsToUsd } from '../../platform/money.ts';
import { pageRequest, toPage } from '../../platform/pagination.ts';
import type { Platform } from '../../platform/platform.ts';
import { checkMediaHealth } from '../../providers/health.ts';
import { TranscriptItem } from '../calls/schemas.ts';
import type { VoiceService, VoiceSessionRow } from './service.ts';
import { SESSION_END_REASONS, SESSION_STATUSES } from './tables.ts';

// Voice sessions (create, list, get, end, transcript), media tokens, media health, and the
// built-in media WebSocket GET /v1/media/stream?token= (refused at the upgrade with 401 unless the
// token opens an active session nobody has connected to yet).

const tags = ['voice'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const write = { access: { auth: 'workspace', scope: 'write' } } as const;

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
const VoiceSession = Type.Object(SessionFields, { title: 'VoiceSession' });
const VoiceSessionCreated = Type.Object(
  { ...SessionFields, token: Type.String({ description: 'Shown once: the media token (built-in) or the LiveKit access token' }) },
  { title: 'VoiceSessionCreated' },
);
const CreateBody = Type.Object(
  {
    agent_id: Type.String({ minLength: 1, maxLength: 64 }),
    external_user_id: Type.String({ minLength: 1, maxLength: 200, description: 'Your id of the end user' }),
    metadata: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), { maxProperties: 50 })),
  },
  { additionalProperties: false },
);
const TokenBody = Type.Object(
  { agent_id: Type.String({ minLength: 1, maxLength: 64 }), external_user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
);
const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    agent_id: Type.Optional(Type.String({ maxLength: 64 })),
    external_user_id: Type.Optional(Type.String({ maxLength: 200 })),
    status: Type.Optional(Type.Enum(SESSION_STATUSES)),
  },
  { additionalProperties: false },
);
const Health = Type.Object(
  {
    provider: Type.Enum(['builtin', 'livekit']),
    configured: Type.Boolean(),
    reachable: Nullable(Type.Boolean()),
    latency_ms: Nullable(Type.Integer()),
    engines: Type.Record(Type.String(), Type.Unknown(), { description: 'Telephony, STT and TTS: which engine, real or simulated, reachable' }),
  },
  { title: 'MediaHealth' },
);

export function voiceRoutes(platform: Platform, service: VoiceService): FastifyPluginAsyncTypebox {
  const { db } = platform;
  const realtime = platform.providers.realtime;

  type CallFigures = { duration_ms: number | null; cost_micros: number | string | null };

  /** The connected time and cost of each session's call, read in one query for a page of sessions. */
  async function callFigures(rows: VoiceSessionRow[]): Promise<Map<string, CallFigures>> {
    if (rows.length === 0) return new Map();
    const calls = await db.selectFrom('calls').select(['id', 'duration_ms', 'cost_micros']).where('id', 'in', rows.map((r) => r.call_id)).execute();
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
      url: row.transport === 'livekit' && realtime ? realtime.url : service.mediaUrl,
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

  return async (app) => {
    const create = async (workspaceId: string, body: { agent_id: string; external_user_id?: string; metadata?: Record<string, unknown> }) => {
      const { row, token } = await service.create(workspaceId, body);
      return { ...(await present(row)), token };
    };

    app.post(
      '/v1/voice/sessions',
      { schema: { operationId: 'createVoiceSession', summary: 'Start a headless voice session with an agent: a media token and where to connect', tags, body: CreateBody, response: { 201: VoiceSessionCreated } }, config: write },
      async (request, reply) => reply.code(201).send(await create(workspaceOf(request).workspaceId, request.body)),
    );

    app.post(
      '/v1/media/token',
      { schema: { operationId: 'createMediaToken', summary: 'A real-time media token for a browser voice call (a voice session)', tags, body: TokenBody, response: { 201: VoiceSessionCreated } }, config: write },
      async (request, reply) => reply.code(201).send(await create(workspaceOf(request).workspaceId, request.body)),
    );

    app.get(
      '/v1/voice/sessions',
      { schema: { operationId: 'listVoiceSessions', summary: 'Voice sessions, newest first', tags, querystring: ListQuery, response: { 200: ListOf(VoiceSession, 'VoiceSessionList') } }, config: read },
      async (request) => {
        const page = pageRequest(request.query);
        let query = db.selectFrom('voice_sessions').selectAll().where('workspace_id', '=', workspaceOf(request).workspaceId);
        if (request.query.agent_id) query = query.where('agent_id', '=', request.query.agent_id);
        if (request.query.external_user_id) query = query.where('external_user_id', '=', request.query.external_user_id);
        if (request.query.status) query = query.where('status', '=', request.query.status);
        if (page.after) query = query.where('id', '<', page.after);
        const rows = await query.orderBy('id', 'desc').limit(page.limit + 1).execute();
        const listed = toPage(rows, page, (r) => r.id, (r) => r);
        const figures = await callFigures(listed.data);
        return { ...listed, data: await Promise.all(listed.data.map((row) => present(row, figures))) };
      },
    );

    const Params = IdParams('Voice session id (vs_…)');
    app.get('/v1/voice/sessions/:id', { schema: { operationId: 'getVoiceSession', summary: 'One voice session', tags, params: Params, response: { 200: VoiceSession } }, config: read }, async (request) =>
      present(await service.sessionOf(workspaceOf(request).workspaceId, request.params.id)),
    );

    app.post(
      '/v1/voice/sessions/:id/end',
      { schema: { operationId: 'endVoiceSession', summary: 'End a voice session (409 once ended)', tags, params: Params, response: { 200: VoiceSession } }, config: write },
      async (request) => present(await service.end(workspaceOf(request).workspaceId, request.params.id)),
    );

    app.get(
      '/v1/voice/sessions/:id/transcript',
      {
        schema: {
          operationId: 'getVoiceSessionTranscript',
          summary: "The session's transcript (its call's)",
          tags,
          params: Params,
          response: { 200: Type.Object({ session_id: Type.String(), call_id: Type.String(), transcript: Type.Array(TranscriptItem) }, { title: 'VoiceSessionTranscript' }) },
        },
        config: read,
      },
      async (request) => {
        const session = await service.sessionOf(workspaceOf(request).workspaceId, request.params.id);
        const call = await db.selectFrom('calls').select(['transcript']).where('id', '=', session.call_id).executeTakeFirstOrThrow();
        return { session_id: session.id, call_id: session.call_id, transcript: call.transcript as never };
      },
    );

    app.get(
      '/v1/media/health',
      { schema: { operationId: 'getMediaHealth', summary: 'The real-time media configuration: provider, configured, reachable, latency; and the engines behind calls', tags, response: { 200: Health } }, config: read },
      async () => {
        const [engines, live] = await Promise.all([
          checkMediaHealth({ providers: platform.providers, config: platform.config, timeoutMs: 3000 }),
          realtime ? realtime.health() : Promise.resolve({ provider: 'builtin' as const, configured: true, reachable: true, latency_ms: 0 }),
        ]);
        return { ...live, engines: engines as unknown as Record<string, unknown> };
      },
    );

    // The built-in media WebSocket: not an HTTP operation (kept out of openapi.json).
    const tokens = new WeakMap<object, VoiceSessionRow>();
    app.get(
      '/v1/media/stream',
      {
        websocket: true,
        schema: { hide: true, operationId: 'mediaStream', querystring: Type.Object({ token: Type.Optional(Type.String({ maxLength: 200 })) }) },
        config: { access: { auth: 'public' } },
        preValidation: async (request) => {
          const token = (request.query as { token?: string }).token;
          const session = token ? await service.sessionForToken(token) : null;
          if (!session) throw unauthorized('the media token is missing, wrong, expired or already used');
          tokens.set(request, session);
        },
      },
      (socket, request) => {
        const session = tokens.get(request);
        if (!session) return socket.close(1008);
        void service.connect(session, socket).catch((error) => {
          platform.logger.error({ err: error }, 'media session failed to start');
          socket.close(1011);
        });
      },
    );
  };
}
