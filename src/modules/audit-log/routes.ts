import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import type { Platform } from '../../platform/platform.ts';
import { createAuditLogRepo } from './repo.ts';
import { AuditLogList, AuditLogQuery } from './schemas.ts';
import { createAuditLogService } from './service.ts';

export function auditLogRoutes(platform: Platform): FastifyPluginAsyncTypebox {
  const service = createAuditLogService({ ...platform, auditLog: createAuditLogRepo() });

  return async (app) => {
    app.get(
      '/v1/audit-log',
      {
        schema: {
          operationId: 'listAuditLog',
          summary: "The workspace's audit trail (writes and API-key use), newest first",
          tags: ['audit-log'],
          querystring: AuditLogQuery,
          response: { 200: AuditLogList },
        },
        config: { access: { auth: 'workspace', scope: 'admin' } },
      },
      async (request) => service.list(workspaceOf(request), request.query),
    );
  };
}
