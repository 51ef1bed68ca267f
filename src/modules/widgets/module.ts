import type { Platform } from '../../platform/platform.ts';
import type { AgentsService } from '../agents/service.ts';
import type { BrandingService } from '../branding/service.ts';
import type { VoiceService } from '../voice/service.ts';
import { createWidgetsRepo } from './repo.ts';
import { widgetsRoutes } from './routes.ts';
import { createWidgetsService } from './service.ts';

// The widgets module: widgets and their conversations, and the public endpoints a widget's page
// calls (chat through the agents service, voice through the voice sessions, the preview branded).

export function createWidgetsModule(platform: Platform, deps: { agents: AgentsService; branding: BrandingService; voice: VoiceService }) {
  const service = createWidgetsService({ db: platform.db, clock: platform.clock, repo: createWidgetsRepo(), agents: deps.agents, publicBaseUrl: platform.config.publicBaseUrl });
  return { routes: widgetsRoutes(service, { branding: deps.branding, voice: deps.voice }), service };
}
