import { pingDatabase } from '../../platform/db/database.ts';
import type { Platform } from '../../platform/platform.ts';
import { healthRoutes } from './routes.ts';
import { createHealthService } from './service.ts';

// The health module: GET /v1/health pings the database and Redis (through its service).

export function createHealthModule(platform: Platform) {
  const { redis } = platform;
  const service = createHealthService({
    databaseKind: platform.database.kind,
    pingDatabase: () => pingDatabase(platform.db),
    pingRedis: redis ? () => redis.ping() : undefined,
  });
  return { routes: healthRoutes(service), service };
}
