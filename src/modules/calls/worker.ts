import type { Span } from '@opentelemetry/api';
import { createJobRunner } from '../../platform/jobs/runner.ts';
import type { Platform } from '../../platform/platform.ts';
import { type CallRow, claimQueuedCalls } from './dialer-sql.ts';
import type { createCallOwnership } from './ownership.ts';
import type { CallRunner } from './runner.ts';

// The dialer, a job on the platform's job runner: claims queued calls within each workspace's
// limit and runs each to its end in this process. Its sweep renews the leases of the calls it runs
// and ends calls whose owner died. Woken by a nudge when a call is queued or a slot frees, else polls.
//
// CALLS_PER_PROCESS caps the live calls of this process: a claim takes at most what is left of it
// after the runner's live calls (inbound calls and voice sessions included) and the calls already
// claimed but not yet handed to the runner; the rest stay queued for another worker or a free
// slot. Inbound calls and voice sessions count but are never refused for it: they arrive over this
// process's own media connection and cannot run elsewhere (as with the workspace limit, they are
// answered; see docs/decisions.md).

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

  // Slots of claims in flight and of claimed calls not yet registered with the runner, so that two
  // claims at once (the loop and runDueOnce) never take more than CALLS_PER_PROCESS together.
  let reserved = 0;

  async function claim(limit: number): Promise<CallRow[]> {
    const room = Math.min(limit, config.calls.perProcess - runner.size - reserved);
    if (room <= 0) return [];
    reserved += room;
    let rows: CallRow[] = [];
    try {
      rows = await claimQueuedCalls(platform.db, platform.clock, {
        holder: runner.holder,
        limit: room,
        leaseMs: config.calls.leaseMs,
        defaultMaxConcurrent: config.calls.maxConcurrent,
      });
      return rows;
    } finally {
      // A claimed row keeps its slot until start() hands it to the runner.
      reserved -= room - rows.length;
    }
  }

  /** Hands a claimed call to the runner, which registers it at once (runner.size grows as `reserved` shrinks). */
  function start(row: CallRow, span?: Span): Promise<void> {
    reserved--;
    return runner.runOutbound(row, span);
  }

  const jobs = createJobRunner<CallRow>({
    database: platform.database,
    clock: platform.clock,
    logger: platform.logger,
    job: {
      name: 'calls',
      claim,
      // A call runs to its end; its slot freeing wakes the loop (the job runner's own signal).
      run: (row, _signal, span) => start(row, span),
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
      concurrency: config.calls.perProcess,
      pollIntervalMs: deps.pollIntervalMs ?? 1000,
      // Shutdown does not wait for calls to finish: their leases lapse and another worker ends them.
      stopTimeoutMs: 1000,
      describe: (row) => ({ callId: row.id }),
      // The dialer's run of a call continues the trace of the request that placed it.
      traceParent: (row) => row.trace_parent,
      spanAttributes: (row) => ({ 'vap.call_id': row.id, 'vap.workspace_id': row.workspace_id, 'vap.agent_id': row.agent_id }),
    },
    tracer: platform.telemetry.tracer,
  });

  return {
    /** Starts the calls that may start now, without waiting for them to end; answers how many. */
    async runDueOnce(): Promise<number> {
      const rows = await claim(config.calls.perProcess);
      // Each as the loop runs it: in its job span when tracing is on.
      for (const row of rows) void jobs.run(row);
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
