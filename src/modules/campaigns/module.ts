import type { Platform } from '../../platform/platform.ts';
import type { CallsModule } from '../calls/module.ts';
import { createCampaignDialer } from './dialer.ts';
import { createCampaignsService } from './service.ts';

// The campaigns module assembled once per app: the service behind the routes and the campaign
// dialer the server starts (ROLE=all|worker).

export function createCampaignsModule(platform: Platform, calls: CallsModule) {
  const dialer = createCampaignDialer(platform, calls);
  const service = createCampaignsService({ platform, journal: calls.journal, announce: dialer.announce });
  return { service, dialer };
}

export type CampaignsModule = ReturnType<typeof createCampaignsModule>;
