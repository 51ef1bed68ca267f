import type { Platform } from '../../platform/platform.ts';
import type { CallFigures } from '../calls/figures.ts';
import { createAnalyticsRepo } from './repo.ts';
import { analyticsRoutes } from './routes.ts';
import { createAnalyticsService } from './service.ts';

// The analytics module: figures over calls.

export function createAnalyticsModule(platform: Platform, deps: { callFigures: CallFigures }) {
  const service = createAnalyticsService({ db: platform.db, clock: platform.clock, analytics: createAnalyticsRepo(), calls: deps.callFigures });
  return { routes: analyticsRoutes(service), service };
}
