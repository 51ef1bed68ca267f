import type { Platform } from '../../platform/platform.ts';
import { dncRoutes } from './routes.ts';
import { createDncService } from './service.ts';

// The do-not-call module: the workspace's list, which outbound calls and campaign uploads refuse.

export function createDncModule(platform: Platform) {
  const service = createDncService({ db: platform.db, clock: platform.clock });
  return { routes: dncRoutes(service), service };
}
