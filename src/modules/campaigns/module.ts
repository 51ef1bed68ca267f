import type { Job } from '../../platform/jobs/job.ts';
import type { Platform } from '../../platform/platform.ts';
import type { CallsModule } from '../calls/module.ts';
import { createCampaignDialer } from './dialer.ts';
import { campaignsRoutes } from './routes.ts';
import { createCampaignsService } from './service.ts';

// The campaigns module assembled once per app: the service behind the routes and the campaign
// dialer, a job (ROLE=all|worker) queuing due contacts' calls for the calls dialer.

export function createCampaignsModule(platform: Platform, deps: { calls: CallsModule }) {
  const { calls } = deps;
  const { telephony } = platform.providers;
  const dialer = createCampaignDialer({
    database: platform.database,
    clock: platform.clock,
    logger: platform.logger,
    events: platform.events,
    journal: calls.journal,
    provider: telephony.name,
    nudgeCalls: () => calls.worker.nudge(),
  });
  const service = createCampaignsService({
    db: platform.db,
    clock: platform.clock,
    cpu: platform.cpu,
    ownsCallerIds: telephony.ownsCallerIds,
    journal: calls.journal,
    queuedCallsOf: calls.reads.queuedOfCampaign,
    announce: dialer.announce,
  });
  const jobs: Job[] = [{ name: 'campaigns', start: dialer.start, stop: dialer.stop }];
  return { routes: campaignsRoutes(service), service, dialer, jobs };
}
