import type { Job } from '../../platform/jobs/job.ts';
import type { Platform } from '../../platform/platform.ts';
import { paymentsRoutes } from './routes.ts';
import { createPaymentsService } from './service.ts';
import { createRechargeWorker } from './worker.ts';

// The payments module assembled once per app: the service behind the routes and the
// auto-recharge worker, a job (ROLE=all|worker).

export function createPaymentsModule(platform: Platform) {
  const service = createPaymentsService({ db: platform.db, clock: platform.clock, events: platform.events, provider: platform.providers.payments });
  const worker = createRechargeWorker({ database: platform.database, clock: platform.clock, logger: platform.logger, payments: service });
  const jobs: Job[] = [{ name: 'auto-recharge', start: worker.start, stop: worker.stop }];
  return { routes: paymentsRoutes(service), service, worker, jobs };
}
