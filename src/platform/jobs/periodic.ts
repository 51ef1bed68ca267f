import type { JobDefinition } from './runner.ts';

// A job with no rows of its own: one pass every intervalMs (housekeeping purges, say). Its claim
// yields a single tick once the pass is due, so the runner gives it the same loop, stop and
// error logging as a queue. Real time, not the injected clock: this is a cadence, like a timer
// (what the pass does at which clock time is the pass's business).

export interface PeriodicJobInput {
  name: string;
  /** Time from the end of one pass to the start of the next. */
  intervalMs: number;
  /** Time from the first claim after start to the first pass (default intervalMs). */
  firstDelayMs?: number;
  /** One pass; `signal` is aborted when the runner stops (end early, at a safe point). */
  run(signal: AbortSignal): Promise<void>;
  /** Whether the runner's timer keeps the process alive (default false: a periodic chore never should on its own). */
  keepAlive?: boolean;
}

/** A claim of a periodic job: when the pass was claimed (epoch ms). */
export type PeriodicTick = number;

export function periodicJob(input: PeriodicJobInput): JobDefinition<PeriodicTick> {
  if (!(input.intervalMs >= 1)) throw new Error(`job ${input.name}: intervalMs must be at least 1`);
  const firstDelayMs = Math.max(0, Math.min(input.firstDelayMs ?? input.intervalMs, input.intervalMs));
  let nextAt: number | null = null;
  let busy = false;
  return {
    name: input.name,
    concurrency: 1,
    // Checking whether the pass is due costs nothing: poll at the first delay (≤ the interval),
    // so the first pass comes that soon after start; after a pass the loop wakes, finds the next
    // one not due yet and sleeps again.
    pollIntervalMs: firstDelayMs > 0 ? firstDelayMs : input.intervalMs,
    keepAlive: input.keepAlive ?? false,
    async claim() {
      const now = Date.now();
      nextAt ??= now + firstDelayMs;
      if (busy || now < nextAt) return [];
      busy = true;
      return [now];
    },
    async run(_tick, signal) {
      try {
        await input.run(signal);
      } finally {
        busy = false;
        nextAt = Date.now() + input.intervalMs;
      }
    },
  };
}
