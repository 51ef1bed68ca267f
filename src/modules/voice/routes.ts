import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import { Type } from 'typebox';
import type { WorkspaceContext } from '../../platform/auth/access.ts';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { unauthorized } from '../../platform/errors.ts';
import { IdParams, ListOf, Nullable } from '../../platform/http/schemas.ts';
import { TranscriptItem } from '../calls/schemas.ts';
import { VoiceSession, VoiceSessionCreated } from './present.ts';
import type { VoiceService, VoiceSessionRow } from './service.ts';
import { SESSION_STATUSES } from './tables.ts';

// Voice sessions (create, list, get, end, transcript), media tokens, media health, and the
// built-in media WebSocket GET /v1/media/stream?token= (refused at the upgrade with 401 unless the
// token opens an active session nobody has connected to yet).

const tags = ['voice'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const write = { access: { auth: 'workspace', scope: 'write' } } as const;

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

/** `logger`: where a media session that fails to start is logged. */
export function voiceRoutes(service: VoiceService, logger: FastifyBaseLogger): FastifyPluginAsyncTypebox {
  const { present } = service;

  return async (app) => {
    const create = async (ctx: WorkspaceContext, body: { agent_id: string; external_user_id?: string; metadata?: Record<string, unknown> }) => {
      const { row, token } = await service.create(ctx.workspaceId, body, { traceParent: ctx.traceParent });
      return { ...(await present(row)), token };
    };

    app.post(
      '/v1/voice/sessions',
      { schema: { operationId: 'createVoiceSession', summary: 'Start a headless voice session with an agent: a media token and where to connect', tags, body: CreateBody, response: { 201: VoiceSessionCreated } }, config: write },
      async (request, reply) => reply.code(201).send(await create(workspaceOf(request), request.body)),
    );

    app.post(
      '/v1/media/token',
      { schema: { operationId: 'createMediaToken', summary: 'A real-time media token for a browser voice call (a voice session)', tags, body: TokenBody, response: { 201: VoiceSessionCreated } }, config: write },
      async (request, reply) => reply.code(201).send(await create(workspaceOf(request), request.body)),
    );

    app.get(
      '/v1/voice/sessions',
      { schema: { operationId: 'listVoiceSessions', summary: 'Voice sessions, newest first', tags, querystring: ListQuery, response: { 200: ListOf(VoiceSession, 'VoiceSessionList') } }, config: read },
      async (request) => service.list(workspaceOf(request).workspaceId, request.query),
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
      async (request) => service.transcriptOf(workspaceOf(request).workspaceId, request.params.id),
    );

    app.get(
      '/v1/media/health',
      { schema: { operationId: 'getMediaHealth', summary: 'The real-time media configuration: provider, configured, reachable, latency; and the engines behind calls', tags, response: { 200: Health } }, config: read },
      async () => service.mediaHealth(),
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
        void service.connect(session, socket, request.raw.socket).catch((error) => {
          logger.error({ err: error }, 'media session failed to start');
          socket.close(1011);
        });
      },
    );
  };
}
