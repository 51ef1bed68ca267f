import type { Platform } from '../../platform/platform.ts';
import { agentsServiceOf } from '../agents/module.ts';
import { createWidgetsRepo } from './repo.ts';
import { createWidgetsService, type WidgetsService } from './service.ts';

// The app's one widgets service.

const byPlatform = new WeakMap<Platform, WidgetsService>();

export function widgetsServiceOf(platform: Platform): WidgetsService {
  let service = byPlatform.get(platform);
  if (!service) {
    service = createWidgetsService({
      db: platform.db,
      clock: platform.clock,
      repo: createWidgetsRepo(),
      agents: agentsServiceOf(platform),
      publicBaseUrl: platform.config.publicBaseUrl,
    });
    byPlatform.set(platform, service);
  }
  return service;
}
