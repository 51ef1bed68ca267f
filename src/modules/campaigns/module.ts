import type { Job } from '../../platform/jobs/job.ts';
import type { Platform } from '../../platform/platform.ts';
import type { CallsModule } from '../calls/module.ts';
import { createCampaignDialer } from './dialer.ts';
import { campaignsRoutes } from './routes.ts';
import { createCampaignsService } from './service.ts';

// The campaigns module assembled once per app: the service behind the routes and the campaign
// dialer, a job (ROLE=all|worker) queuing due contacts' calls for the calls dialer.

export function createCampaignsModule(platform: Platform, deps: { calls: CallsModule }) {
  const dialer = createCampaignDialer(platform, deps.calls);
  const service = createCampaignsService({ platform, journal: deps.calls.journal, announce: dialer.announce });
  const jobs: Job[] = [{ name: 'campaigns', start: dialer.start, stop: dialer.stop }];
  return { routes: campaignsRoutes(service), service, dialer, jobs };
}

export type CampaignsModule = ReturnType<typeof createCampaignsModule>;
