import { periodicJob } from '../../platform/jobs/periodic.ts';
import { createJobRunner } from '../../platform/jobs/runner.ts';
import type { Platform } from '../../platform/platform.ts';
import type { CallsModule } from '../calls/module.ts';
import { createVoiceService } from './service.ts';

// The voice module assembled once per app: the session service behind the routes and the media
// WebSocket, and a periodic job ending sessions whose token expired before anyone connected.

export function createVoiceModule(platform: Platform, calls: CallsModule) {
  const service = createVoiceService({ platform, calls, realtime: platform.providers.realtime });
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
  return {
    service,
    worker: { runDueOnce: () => service.endExpired(), start: () => void runner.start(), stop: runner.stop },
  };
}

export type VoiceModule = ReturnType<typeof createVoiceModule>;
