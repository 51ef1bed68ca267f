import type { WorkspaceContext } from '../../platform/auth/access.ts';
import type { Database } from '../../platform/db/schema.ts';
import { invalidField } from '../../platform/errors.ts';
import { type Page, pageRequest, toPage } from '../../platform/pagination.ts';
import type { AuditLogRepo, AuditRow } from './repo.ts';
import type { AuditEntry, AuditLogQuery } from './schemas.ts';

export interface AuditLogServiceDeps {
  db: Database;
  auditLog: AuditLogRepo;
}

/** Key-use rows are not one request's response: the writer stores '-' and 0, the API says null. */
export function presentAuditEntry(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
    action: row.action,
    method: row.method === '-' ? null : row.method,
    route: row.route === '-' ? null : row.route,
    resource_id: row.resource_id,
    status_code: row.status_code === 0 ? null : row.status_code,
    ip: row.ip,
    user_agent: row.user_agent,
    request_id: row.request_id,
    created_at: new Date(row.created_at).toISOString(),
  };
}

export function createAuditLogService(deps: AuditLogServiceDeps) {
  const { db, auditLog } = deps;
  return {
    async list(ctx: WorkspaceContext, query: AuditLogQuery): Promise<Page<AuditEntry>> {
      const since = query.since ? new Date(query.since) : undefined;
      const until = query.until ? new Date(query.until) : undefined;
      if (since && until && until <= since) throw invalidField('query.until', 'must be later than since');
      const page = pageRequest(query);
      const rows = await auditLog.list(db, ctx.workspaceId, { actorId: query.actor_id, since, until }, page);
      return toPage(rows, page, (row) => row.id, presentAuditEntry);
    },
  };
}

export type AuditLogService = ReturnType<typeof createAuditLogService>;
