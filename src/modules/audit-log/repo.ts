import type { Executor } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/pagination.ts';

// Reads of the audit trail (rows are written by platform/audit.ts). Always within one workspace.

export interface AuditFilter {
  actorId?: string;
  since?: Date;
  until?: Date;
}

export function createAuditLogRepo() {
  return {
    list(db: Executor, workspaceId: string, filter: AuditFilter, page: PageRequest) {
      let query = db.selectFrom('audit_log').selectAll().where('workspace_id', '=', workspaceId);
      if (filter.actorId !== undefined) query = query.where('actor_id', '=', filter.actorId);
      if (filter.since) query = query.where('created_at', '>=', filter.since);
      if (filter.until) query = query.where('created_at', '<', filter.until);
      if (page.after !== undefined) query = query.where('id', '<', page.after);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },
  };
}

export type AuditLogRepo = ReturnType<typeof createAuditLogRepo>;
export type AuditRow = Awaited<ReturnType<AuditLogRepo['list']>>[number];
