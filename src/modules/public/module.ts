import type { Platform } from '../../platform/platform.ts';
import { publicRoutes } from './routes.ts';
import { createPublicService } from './service.ts';

// The public module: the contact form, the newsletter and client events.

export function createPublicModule(platform: Platform) {
  const service = createPublicService({ db: platform.db, clock: platform.clock, mailer: platform.mailer, logger: platform.logger, contactEmail: platform.config.contactEmail });
  return { routes: publicRoutes(service), service };
}
