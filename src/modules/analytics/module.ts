import type { Platform } from '../../platform/platform.ts';
import { createAnalyticsRepo } from './repo.ts';
import { analyticsRoutes } from './routes.ts';
import { createAnalyticsService } from './service.ts';

// The analytics module: figures over calls.

export function createAnalyticsModule(platform: Platform) {
  const service = createAnalyticsService({ ...platform, analytics: createAnalyticsRepo() });
  return { routes: analyticsRoutes(service), service };
}
