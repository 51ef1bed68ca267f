import { periodicJob } from '../../platform/jobs/periodic.ts';
import type { Job } from '../../platform/jobs/job.ts';
import { createJobRunner } from '../../platform/jobs/runner.ts';
import type { Platform } from '../../platform/platform.ts';
import type { CallsModule } from '../calls/module.ts';
import { voiceRoutes } from './routes.ts';
import { createVoiceService } from './service.ts';

// The voice module assembled once per app: the session service behind the routes, the media
// WebSocket and the widgets' voice, and a job (ROLE=all|worker) ending sessions whose token
// expired before anyone connected.

export function createVoiceModule(platform: Platform, deps: { calls: CallsModule }) {
  const service = createVoiceService({ platform, calls: deps.calls, realtime: platform.providers.realtime });
  const runner = createJobRunner({
    database: platform.database,
    clock: platform.clock,
    logger: platform.logger,
    job: periodicJob({
      name: 'voice-session-expiry',
      intervalMs: 30_000,
      async run() {
        const ended = await service.endExpired();
        if (ended > 0) platform.logger.info({ ended }, 'voice sessions ended unjoined');
      },
    }),
  });
  const worker = { runDueOnce: () => service.endExpired(), start: () => void runner.start(), stop: runner.stop };
  const jobs: Job[] = [{ name: 'voice-session-expiry', start: worker.start, stop: worker.stop }];
  return { routes: voiceRoutes(service, platform.logger), service, worker, jobs };
}
