import type { Job } from '../../platform/jobs/job.ts';
import type { Platform } from '../../platform/platform.ts';
import { createHousekeepingWorker, DEFAULT_INTERVAL_MS } from './worker.ts';

// The housekeeping module: no routes, one job (ROLE=all|worker) purging expired rows every 10 minutes.

export function createHousekeepingModule(platform: Platform) {
  const worker = createHousekeepingWorker({ database: platform.database, clock: platform.clock, logger: platform.logger, intervalMs: DEFAULT_INTERVAL_MS });
  const jobs: Job[] = [{ name: 'housekeeping', start: worker.start, stop: worker.stop }];
  return { worker, jobs };
}
