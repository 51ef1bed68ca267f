import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { HealthService } from './service.ts';

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

export function healthRoutes(service: HealthService): FastifyPluginAsyncTypebox {
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
        const { ok, report } = await service.check();
        return reply.code(ok ? 200 : 503).send(report);
      },
    );
  };
}
