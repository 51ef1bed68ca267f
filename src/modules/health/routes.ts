import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { pingDatabase } from '../../platform/db/database.ts';
import { API_VERSION } from '../../platform/http/openapi.ts';
import type { Platform } from '../../platform/platform.ts';

const Health = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
    version: Type.String(),
    database: Type.Object({ kind: Type.Union([Type.Literal('pglite'), Type.Literal('postgres')]), ok: Type.Boolean() }),
    redis: Type.Union([Type.Object({ ok: Type.Boolean() }), Type.Null()]),
    uptime_seconds: Type.Number(),
  },
  { title: 'Health' },
);

export function healthRoutes(platform: Platform): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/health',
      {
        schema: {
          operationId: 'getHealth',
          summary: 'Liveness and dependency health',
          tags: ['public'],
          response: { 200: Health, 503: Health },
        },
        config: { access: { auth: 'public', limit: 'none' } },
      },
      async (_request, reply) => {
        const database = await pingDatabase(platform.db).then(
          () => true,
          () => false,
        );
        const redis = platform.redis
          ? { ok: await platform.redis.ping().then((r) => r === 'PONG', () => false) }
          : null;
        const ok = database && (redis?.ok ?? true);
        return reply.code(ok ? 200 : 503).send({
          status: ok ? 'ok' : 'degraded',
          version: API_VERSION,
          database: { kind: platform.database.kind, ok: database },
          redis,
          uptime_seconds: Math.round(process.uptime()),
        });
      },
    );
  };
}
