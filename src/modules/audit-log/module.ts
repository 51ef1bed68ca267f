import type { Platform } from '../../platform/platform.ts';
import { createAuditLogRepo } from './repo.ts';
import { auditLogRoutes } from './routes.ts';
import { createAuditLogService } from './service.ts';

// The audit log module: reading the trail the platform writes (platform/audit.ts).

export function createAuditLogModule(platform: Platform) {
  const service = createAuditLogService({ ...platform, auditLog: createAuditLogRepo() });
  return { routes: auditLogRoutes(service), service };
}
