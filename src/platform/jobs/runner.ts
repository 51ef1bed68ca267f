import { type Span, SpanKind, type Tracer } from '@opentelemetry/api';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import { CHANNEL_NAME, type ChannelListener, createChannelListener } from '../db/channel-listener.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { contextOf, inSpan } from '../telemetry/context.ts';

// The one loop every background job runs on (DESIGN part 2, "background work"). A job says how
// to claim due rows (one statement that leases them and commits: the SQL lives beside the job,
// apart from this loop) and how to run one claimed row (network I/O outside any transaction,
// then the result recorded in a new short transaction fenced by the lease). The runner:
//  - keeps up to `concurrency` rows in flight, claiming again as soon as a slot frees;
//  - wakes on the in-process nudge after a commit, on NOTIFY (PostgreSQL: a dedicated pool
//    connection LISTENs on the job's channel and reconnects when it drops), and by polling
//    every pollIntervalMs as the safety net;
//  - runs the job's sweep (housekeeping such as burying rows lost in their last attempt) at
//    most once per sweepIntervalMs, before a claim;
//  - logs a failed claim or run and carries on; a row whose run died is claimed again once its
//    lease expires (the job's claim sees to that);
//  - stop(): stops claiming, aborts the signal runs were given, and waits (bounded) for the
//    rows in flight.

/** What wakes the runner in-process (platform.events.wake is one). */
export interface WakeSource {
  subscribe(listener: () => void): () => void;
}

export interface JobDefinition<Row> {
  /** Names the job in logs. */
  name: string;
  /** Claims (leases and commits) up to `limit` due rows. */
  claim(limit: number): Promise<Row[]>;
  /**
   * Does one row's work and records its result. `signal` is aborted when the runner stops. `span`:
   * the run's span when tracing is on, the parent of what the run starts, queues or emits.
   */
  run(row: Row, signal: AbortSignal, span?: Span): Promise<void>;
  /** Periodic housekeeping before a claim; `now` is the injected clock's time. */
  sweep?(now: Date): Promise<void>;
  /** Rows in flight at most. */
  concurrency: number;
  /**
   * While rows are in flight, claim only once this many slots are free (default 1): under a
   * backlog one claim statement then serves many rows. With nothing in flight a claim runs at once.
   */
  claimBatch?: number;
  /** Safety-net polling interval (the loop also wakes on nudges and NOTIFY). */
  pollIntervalMs: number;
  /** Least time between two sweeps of the loop, by the injected clock (default pollIntervalMs). */
  sweepIntervalMs?: number;
  /** NOTIFY channel to LISTEN on (PostgreSQL); a plain lower-case identifier. */
  channel?: string;
  /** In-process wake-ups. */
  wake?: WakeSource;
  /** How long stop() waits for the rows in flight (default 30 s). */
  stopTimeoutMs?: number;
  /** Log fields naming a row, for a run that fails. */
  describe?(row: Row): Record<string, unknown>;
  /** false: the poll timer does not keep the process alive (default true). */
  keepAlive?: boolean;
  /** The traceparent stored with a row (the request that queued it): its run's span joins that trace. */
  traceParent?(row: Row): string | null;
  /** Span attributes naming a row (ids only, never content). */
  spanAttributes?(row: Row): Record<string, string | number>;
}

export interface JobRunnerDeps<Row> {
  database: DatabaseHandle;
  clock: Clock;
  logger: FastifyBaseLogger;
  job: JobDefinition<Row>;
  /** Tracing on: a span per run (`job <name>`), a child of the row's stored trace when it has one. */
  tracer?: Tracer;
}

const DEFAULT_STOP_TIMEOUT_MS = 30_000;

export function createJobRunner<Row>(deps: JobRunnerDeps<Row>) {
  const { database, clock, logger, job, tracer } = deps;
  if (job.channel !== undefined && !CHANNEL_NAME.test(job.channel)) throw new Error(`job ${job.name}: invalid channel name ${job.channel}`);
  if (!Number.isInteger(job.concurrency) || job.concurrency < 1) throw new Error(`job ${job.name}: concurrency must be a positive integer`);
  const sweepIntervalMs = job.sweepIntervalMs ?? job.pollIntervalMs;
  const claimBatch = Math.min(Math.max(1, job.claimBatch ?? 1), job.concurrency);
  const stopTimeoutMs = job.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;

  const inFlight = new Set<Promise<void>>();
  let running = false;
  let abort = new AbortController();
  let wakeUp: (() => void) | null = null;
  let pending = false;
  let loopDone: Promise<void> | null = null;
  let unsubscribe: (() => void) | null = null;
  let listener: ChannelListener | null = null;
  let lastSweep = 0;

  /** Wakes the loop now, or makes its next sleep return at once. */
  const signal = () => {
    pending = true;
    wakeUp?.();
  };

  function sleep(ms: number): Promise<void> {
    if (pending) {
      pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      if (job.keepAlive === false) timer.unref();
      function done() {
        clearTimeout(timer);
        wakeUp = null;
        pending = false;
        resolve();
      }
      wakeUp = done;
    });
  }

  /** Runs one row (a synchronous throw becomes a rejection like any other). */
  async function runRow(row: Row, abortSignal: AbortSignal): Promise<void> {
    if (!tracer) return await job.run(row, abortSignal);
    const parent = contextOf(job.traceParent?.(row));
    const attributes = { 'vap.job': job.name, ...job.spanAttributes?.(row) };
    await inSpan(tracer, `job ${job.name}`, { kind: SpanKind.CONSUMER, parent, attributes }, (span) => job.run(row, abortSignal, span));
  }

  /** Starts a row in the background of the loop; its end frees a slot and wakes the loop. */
  function launch(row: Row): void {
    const work: Promise<void> = runRow(row, abort.signal)
      .catch((err) => logger.error({ err, job: job.name, ...job.describe?.(row) }, `${job.name}: run failed`))
      .finally(() => {
        inFlight.delete(work);
        signal();
      });
    inFlight.add(work);
  }

  /** Sweeps, claims what is due now (up to the concurrency), runs it; answers how many rows ran. */
  async function runDueOnce(): Promise<number> {
    await job.sweep?.(clock.now());
    const rows = await job.claim(job.concurrency);
    const never = new AbortController().signal;
    const results = await Promise.allSettled(rows.map((row) => runRow(row, never)));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return rows.length;
  }

  async function loop(): Promise<void> {
    while (running) {
      try {
        const free = job.concurrency - inFlight.size;
        if (free > 0 && (inFlight.size === 0 || free >= claimBatch)) {
          const now = clock.now();
          if (job.sweep && now.getTime() - lastSweep >= sweepIntervalMs) {
            lastSweep = now.getTime();
            await job.sweep(now);
          }
          const rows = await job.claim(free);
          for (const row of rows) launch(row);
          // A full batch: more may be due, claim again at once.
          if (rows.length >= free) continue;
        }
      } catch (err) {
        logger.error({ err, job: job.name }, `${job.name}: claim failed`);
      }
      if (!running) break;
      await sleep(job.pollIntervalMs);
    }
  }

  /** LISTEN on the job's channel (PostgreSQL); the listener reconnects while running if it drops. */
  async function listen(): Promise<void> {
    const pool = database.pool;
    if (!job.channel || !pool) return;
    listener = createChannelListener({
      pool,
      channel: job.channel,
      logger,
      name: job.name,
      fallback: 'polling continues',
      logFields: { job: job.name },
      onNotification: signal,
      // Something may have become due while there was no listener.
      onListening: signal,
    });
    await listener.start();
  }

  /** Waits for the rows in flight, at most stopTimeoutMs. */
  async function drainInFlight(): Promise<void> {
    if (inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), stopTimeoutMs);
    });
    const late = await Promise.race([Promise.all([...inFlight]).then(() => false), timedOut]);
    clearTimeout(timer);
    if (late) logger.warn({ job: job.name, inFlight: inFlight.size }, `${job.name}: stopped with rows still in flight`);
  }

  return {
    name: job.name,
    runDueOnce,
    /** Runs one claimed row as the loop would (its span included), outside the loop's slots. */
    run: (row: Row, abortSignal: AbortSignal = new AbortController().signal) => runRow(row, abortSignal),
    /** Wakes the loop (something became due in this process). */
    nudge: signal,
    /** Starts the loop (idempotent). */
    async start(): Promise<void> {
      if (running) return;
      running = true;
      abort = new AbortController();
      unsubscribe = job.wake?.subscribe(signal) ?? null;
      await listen();
      if (running) loopDone = loop();
    },
    /** Stops claiming, aborts the runs' signal and waits (bounded) for the rows in flight. */
    async stop(): Promise<void> {
      if (!running) return;
      running = false;
      unsubscribe?.();
      unsubscribe = null;
      abort.abort();
      wakeUp?.();
      await loopDone;
      loopDone = null;
      await drainInFlight();
      const own = listener;
      listener = null;
      await own?.stop();
    },
  };
}

export type JobRunner = ReturnType<typeof createJobRunner>;
