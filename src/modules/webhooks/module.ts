import type { Job } from '../../platform/jobs/job.ts';
import type { Platform } from '../../platform/platform.ts';
import { createWebhooksRepo } from './repo.ts';
import { webhooksRoutes } from './routes.ts';
import { createWebhooksService } from './service.ts';
import { createWebhookWorker } from './worker.ts';

// The webhooks module: the tenant webhook and its deliveries (routes and service), and the
// delivery worker, a job (ROLE=all|worker), woken in process after an emitting commit.

export function createWebhooksModule(platform: Platform) {
  const { db, clock, config } = platform;
  const service = createWebhooksService({ db, clock, repo: createWebhooksRepo(), events: platform.events, gate: platform.gate, allowPrivateUrls: config.allowPrivateUrls });
  const worker = createWebhookWorker({
    database: platform.database,
    clock,
    webhooks: config.webhooks,
    outbound: platform.outbound,
    logger: platform.logger,
    wake: platform.events.wake,
    tracer: platform.telemetry.tracer,
  });
  const jobs: Job[] = [{ name: 'webhook-deliveries', start: worker.start, stop: worker.stop }];
  return { routes: webhooksRoutes(service), service, worker, jobs };
}
