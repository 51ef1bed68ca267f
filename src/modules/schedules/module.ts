import type { Job } from '../../platform/jobs/job.ts';
import type { Platform } from '../../platform/platform.ts';
import type { CallsModule } from '../calls/module.ts';
import { createScheduleDispatcher } from './dispatch.ts';
import { createSchedulesRepo } from './repo.ts';
import { schedulesRoutes } from './routes.ts';
import { createSchedulesService } from './service.ts';
import { createScheduleWorker } from './worker.ts';

// The schedules module assembled once per app: the service behind the routes and the worker that
// fires due schedules, a job (ROLE=all|worker).

export function createSchedulesModule(platform: Platform, deps: { calls: CallsModule }) {
  const { calls } = deps;
  const repo = createSchedulesRepo();
  const nudgeCalls = () => calls.worker.nudge();
  const { telephony } = platform.providers;
  const dispatcher = createScheduleDispatcher({ db: platform.db, clock: platform.clock, journal: calls.journal, repo, telephony, nudgeCalls });
  const worker = createScheduleWorker({ database: platform.database, clock: platform.clock, logger: platform.logger, dispatcher, repo });
  const service = createSchedulesService({ database: platform.database, clock: platform.clock, repo, dispatcher, telephony, wake: () => worker.nudge(), nudgeCalls });
  const jobs: Job[] = [{ name: 'schedules', start: worker.start, stop: worker.stop }];
  return { routes: schedulesRoutes(service), service, worker, dispatcher, jobs };
}
