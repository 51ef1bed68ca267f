import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import { createJobRunner } from '../../platform/jobs/runner.ts';
import type { ScheduleDispatcher } from './dispatch.ts';
import type { ScheduleRow, SchedulesRepo } from './repo.ts';
import { SCHEDULES_CHANNEL } from './service.ts';

// The schedule worker, a job on the platform's job runner. Its claim fires the due schedules (one
// transaction per batch: locked with SKIP LOCKED, each call queued and the schedule dispatched, so
// several workers and instances fire each schedule once). Polling alone would fire up to a poll
// interval late, so after every claim a timer is armed for the next schedule due (by the injected
// clock); a schedule created or moved wakes the worker of this process (nudge) and of every
// instance (NOTIFY), which re-arms it. Schedules due while no worker ran fire at its start (late).

const BATCH = 100;
/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ScheduleWorkerDeps {
  database: DatabaseHandle;
  clock: Clock;
  logger: FastifyBaseLogger;
  dispatcher: ScheduleDispatcher;
  repo: SchedulesRepo;
  pollIntervalMs?: number;
}

export function createScheduleWorker(deps: ScheduleWorkerDeps) {
  const { database, clock, logger, dispatcher, repo } = deps;
  let timer: NodeJS.Timeout | null = null;
  let running = false;

  function disarm() {
    if (timer) clearTimeout(timer);
    timer = null;
  }

  /** Wakes the loop when the next schedule is due. */
  async function armForNext(): Promise<void> {
    const next = await repo.nextDue(database.db);
    disarm();
    if (!next || !running) return;
    // +1 ms: a timer may fire a little early, and a schedule is due at its time, not before.
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next.getTime() - clock.now().getTime()) + 1);
    timer = setTimeout(() => jobs.nudge(), delay);
    timer.unref();
  }

  const jobs = createJobRunner<ScheduleRow>({
    database,
    clock,
    logger,
    job: {
      name: 'schedules',
      async claim(limit) {
        const fired = await dispatcher.fireDue(Math.min(limit, BATCH));
        // More may be due at once: the runner claims again right away after a full batch.
        if (fired.length < Math.min(limit, BATCH)) await armForNext();
        for (const row of fired) {
          if (row.status === 'failed') logger.info({ scheduleId: row.id, error: row.error }, 'schedule failed: the call could not be placed');
        }
        return fired;
      },
      // The claim did the work (the call is queued; the dialer runs it).
      run: async () => undefined,
      concurrency: BATCH,
      pollIntervalMs: deps.pollIntervalMs ?? 5000,
      channel: SCHEDULES_CHANNEL,
      stopTimeoutMs: 1000,
      describe: (row) => ({ scheduleId: row.id }),
    },
  });

  return {
    /** Fires every schedule due now (tests); answers the rows fired. */
    async runDueOnce(): Promise<ScheduleRow[]> {
      const all: ScheduleRow[] = [];
      for (;;) {
        const fired = await dispatcher.fireDue(BATCH);
        all.push(...fired);
        if (fired.length < BATCH) return all;
      }
    },
    nudge: () => jobs.nudge(),
    async start(): Promise<void> {
      running = true;
      await jobs.start();
    },
    async stop(): Promise<void> {
      running = false;
      disarm();
      await jobs.stop();
    },
  };
}

export type ScheduleWorker = ReturnType<typeof createScheduleWorker>;
