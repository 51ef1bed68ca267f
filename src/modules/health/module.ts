import type { Platform } from '../../platform/platform.ts';
import { healthRoutes } from './routes.ts';

// The health module: GET /v1/health pings the database (and Redis) itself; there is no service.

export function createHealthModule(platform: Platform) {
  return { routes: healthRoutes(platform) };
}
