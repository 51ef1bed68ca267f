import type { Platform } from '../../platform/platform.ts';
import { createBrandingRepo } from './repo.ts';
import { brandingRoutes } from './routes.ts';
import { createBrandingService } from './service.ts';

// The branding module: the routes and the service, which the widgets' preview page also uses.

export function createBrandingModule(platform: Platform) {
  const service = createBrandingService({ db: platform.db, clock: platform.clock, repo: createBrandingRepo() });
  return { routes: brandingRoutes(service), service };
}
