import type { Platform } from '../../platform/platform.ts';
import { createPaymentsService } from './service.ts';
import { createRechargeWorker } from './worker.ts';

// The payments module assembled once per app: the service behind the routes and the
// auto-recharge worker that the server starts (ROLE=all|worker).

export function createPaymentsModule(platform: Platform) {
  const service = createPaymentsService({ db: platform.db, clock: platform.clock, events: platform.events, provider: platform.providers.payments });
  const worker = createRechargeWorker({ database: platform.database, clock: platform.clock, logger: platform.logger, payments: service });
  return { service, worker };
}

export type PaymentsModule = ReturnType<typeof createPaymentsModule>;
