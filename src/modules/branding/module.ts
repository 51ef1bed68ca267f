import type { Platform } from '../../platform/platform.ts';
import { createBrandingRepo } from './repo.ts';
import { type BrandingService, createBrandingService } from './service.ts';

// The app's one branding service, shared by the branding routes and the widget preview.

const byPlatform = new WeakMap<Platform, BrandingService>();

export function brandingServiceOf(platform: Platform): BrandingService {
  let service = byPlatform.get(platform);
  if (!service) {
    service = createBrandingService({ db: platform.db, clock: platform.clock, repo: createBrandingRepo() });
    byPlatform.set(platform, service);
  }
  return service;
}
