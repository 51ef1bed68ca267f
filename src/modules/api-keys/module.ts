import type { Platform } from '../../platform/platform.ts';
import { createApiKeysRepo } from './repo.ts';
import { apiKeysRoutes } from './routes.ts';
import { createApiKeysService } from './service.ts';

// The API keys module.

export function createApiKeysModule(platform: Platform) {
  const service = createApiKeysService({ ...platform, apiKeys: createApiKeysRepo() });
  return { routes: apiKeysRoutes(service), service };
}
