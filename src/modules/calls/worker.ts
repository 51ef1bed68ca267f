import type { Platform } from '../../platform/platform.ts';
import { claimQueuedCalls } from './dialer-sql.ts';
import type { createCallOwnership } from './ownership.ts';
import type { CallRunner } from './runner.ts';

// The dialer: claims queued calls within each workspace's limit and runs them in this process
// (up to CALL_WORKER_CAPACITY at once); renews the leases of the calls it runs and ends calls
// whose owner died. Woken by a nudge when a call is queued, else polls.

export interface CallWorkerDeps {
  platform: Platform;
  runner: CallRunner;
  ownership: ReturnType<typeof createCallOwnership>;
  pollIntervalMs?: number;
}

export function createCallWorker(deps: CallWorkerDeps) {
  const { platform, runner, ownership } = deps;
  const { db, clock, config, logger } = platform;
  const pollIntervalMs = deps.pollIntervalMs ?? 1000;
  const capacity = config.calls.workerCapacity;
  let running = false;
  let wake: (() => void) | null = null;
  let pending = false;
  let loopDone: Promise<void> | null = null;
  let lastRenewal = 0;
  let lastSweep = 0;

  /** Claims what may start now and starts it; answers how many calls started. */
  async function runDueOnce(): Promise<number> {
    const rows = await claimQueuedCalls(db, clock, {
      holder: runner.holder,
      limit: capacity - runner.size,
      leaseMs: config.calls.leaseMs,
      defaultMaxConcurrent: config.calls.maxConcurrent,
    });
    for (const row of rows) {
      void runner.runOutbound(row).finally(() => {
        // A slot freed: queued calls of that workspace may start.
        signal();
      });
    }
    return rows.length;
  }

  async function housekeeping(): Promise<void> {
    const now = Date.now();
    const renewEvery = config.calls.leaseMs / 3;
    if (now - lastRenewal >= renewEvery) {
      lastRenewal = now;
      await ownership.renew();
    }
    if (now - lastSweep >= renewEvery / 2) {
      lastSweep = now;
      await ownership.endLost();
    }
  }

  function signal() {
    pending = true;
    wake?.();
  }

  function sleep(ms: number): Promise<void> {
    if (pending) {
      pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        pending = false;
        resolve();
      }
      wake = done;
    });
  }

  async function loop() {
    while (running) {
      try {
        await housekeeping();
        await runDueOnce();
      } catch (err) {
        logger.error({ err }, 'call worker: claim failed');
      }
      if (!running) break;
      await sleep(pollIntervalMs);
    }
  }

  return {
    runDueOnce,
    /** Wakes the loop (a call was queued, or a slot freed). */
    nudge: () => setImmediate(signal),
    async start() {
      if (running) return;
      running = true;
      loopDone = loop();
    },
    async stop() {
      if (!running) return;
      running = false;
      wake?.();
      await loopDone;
    },
  };
}

export type CallWorker = ReturnType<typeof createCallWorker>;
