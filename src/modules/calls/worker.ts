import { createJobRunner } from '../../platform/jobs/runner.ts';
import type { Platform } from '../../platform/platform.ts';
import { type CallRow, claimQueuedCalls } from './dialer-sql.ts';
import type { createCallOwnership } from './ownership.ts';
import type { CallRunner } from './runner.ts';

// The dialer, a job on the platform's job runner: claims queued calls within each workspace's
// limit and runs each to its end in this process (up to CALL_WORKER_CAPACITY at once). Its sweep
// renews the leases of the calls it runs and ends calls whose owner died. Woken by a nudge when a
// call is queued or a slot frees, else polls.

export interface CallWorkerDeps {
  platform: Platform;
  runner: CallRunner;
  ownership: ReturnType<typeof createCallOwnership>;
  pollIntervalMs?: number;
}

export function createCallWorker(deps: CallWorkerDeps) {
  const { platform, runner, ownership } = deps;
  const { config } = platform;
  const renewEvery = config.calls.leaseMs / 3;
  let lastRenewal = 0;

  const claim = (limit: number) =>
    claimQueuedCalls(platform.db, platform.clock, {
      holder: runner.holder,
      limit: Math.min(limit, config.calls.workerCapacity - runner.size),
      leaseMs: config.calls.leaseMs,
      defaultMaxConcurrent: config.calls.maxConcurrent,
    });

  const jobs = createJobRunner<CallRow>({
    database: platform.database,
    clock: platform.clock,
    logger: platform.logger,
    job: {
      name: 'calls',
      claim,
      // A call runs to its end; a slot freeing may let a queued call of its workspace start.
      run: (row) => runner.runOutbound(row).finally(() => jobs.nudge()),
      // Leases every third of their length; lost calls every sixth.
      async sweep() {
        const now = Date.now();
        if (now - lastRenewal >= renewEvery) {
          lastRenewal = now;
          await ownership.renew();
        }
        await ownership.endLost();
      },
      sweepIntervalMs: renewEvery / 2,
      concurrency: config.calls.workerCapacity,
      pollIntervalMs: deps.pollIntervalMs ?? 1000,
      // Shutdown does not wait for calls to finish: their leases lapse and another worker ends them.
      stopTimeoutMs: 1000,
      describe: (row) => ({ callId: row.id }),
    },
  });

  return {
    /** Starts the calls that may start now, without waiting for them to end; answers how many. */
    async runDueOnce(): Promise<number> {
      const rows = await claim(config.calls.workerCapacity);
      for (const row of rows) void runner.runOutbound(row);
      return rows.length;
    },
    /** Renewal and the lost-call sweep, once (tests; the loop runs them on its own). */
    async sweepOnce(): Promise<void> {
      await ownership.renew();
      await ownership.endLost();
    },
    nudge: () => jobs.nudge(),
    start: () => jobs.start(),
    stop: () => jobs.stop(),
  };
}

export type CallWorker = ReturnType<typeof createCallWorker>;
