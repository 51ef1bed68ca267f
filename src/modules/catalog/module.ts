import type { Platform } from '../../platform/platform.ts';
import { catalogRoutes } from './routes.ts';
import { createCatalogService } from './service.ts';

// The catalog module: voices, their previews and the agent templates.

export function createCatalogModule(platform: Platform) {
  // Synthesis and MP3 encoding run in the app's worker threads: a 300-letter preview is about a
  // second of CPU, and eight at once on the event loop held /v1/health for 1.6 s.
  const service = createCatalogService({ tts: platform.providers.tts, publicBaseUrl: platform.config.publicBaseUrl, cpu: platform.cpu });
  return { routes: catalogRoutes(service), service };
}
