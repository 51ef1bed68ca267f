import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import { periodicJob } from '../../platform/jobs/periodic.ts';
import { createJobRunner } from '../../platform/jobs/runner.ts';
import type { PaymentsService } from './service.ts';

// Auto-recharge as a periodic job on the platform's job runner: a pass every few seconds charges
// the wallets that crossed below their threshold (the charge is network I/O, never inside the
// ledger transaction that crossed it). ROLE=all|worker runs it.

export function createRechargeWorker(deps: { database: DatabaseHandle; clock: Clock; logger: FastifyBaseLogger; payments: PaymentsService; intervalMs?: number }) {
  const runner = createJobRunner({
    database: deps.database,
    clock: deps.clock,
    logger: deps.logger,
    job: periodicJob({
      name: 'auto-recharge',
      intervalMs: deps.intervalMs ?? 5000,
      async run() {
        const charged = await deps.payments.rechargeDue();
        if (charged > 0) deps.logger.info({ charged }, 'auto-recharge: wallets charged');
      },
    }),
  });
  return {
    /** One pass now (tests). */
    runDueOnce: () => deps.payments.rechargeDue(),
    start: () => void runner.start(),
    stop: runner.stop,
  };
}
