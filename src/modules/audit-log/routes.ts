import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { AuditLogList, AuditLogQuery } from './schemas.ts';
import type { AuditLogService } from './service.ts';

export function auditLogRoutes(service: AuditLogService): FastifyPluginAsyncTypebox {
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
