import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import pino from 'pino';
import { testDatabase, usingPostgres } from '../../../test/support/database.ts';
import { manualClock } from '../clock.ts';
import { createWakeSignal } from '../outbox/emitter.ts';
import { periodicJob } from './periodic.ts';
import { createJobRunner, type JobDefinition, type WakeSource } from './runner.ts';

// The job runner with a job whose rows are an in-memory queue: what the loop claims, how many
// rows it keeps in flight, what wakes it, how it stops and how it survives failures. The real
// jobs (webhook deliveries, housekeeping) are tested on the database beside their modules.

interface LogLine {
  level: number;
  msg: string;
  job?: string;
  item?: string;
}

function capturingLogger() {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) }) as unknown as FastifyBaseLogger;
  return { logger, lines };
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Waits (bounded) until `condition` holds. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** Lets the event loop turn a few times (for things that must NOT happen). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

type QueueJobOptions = Partial<Omit<JobDefinition<string>, 'claim' | 'run'>> & {
  run?: (item: string, signal: AbortSignal) => Promise<void>;
  failClaims?: number;
};

/** A job whose due rows are `state.queue`; its claim takes from the front. */
function queueJob(options: QueueJobOptions = {}) {
  const state = { queue: [] as string[], claims: 0, emptyClaims: 0, ran: [] as string[], running: 0, maxRunning: 0, sweeps: [] as Date[], failClaims: options.failClaims ?? 0 };
  const { run, failClaims: _, ...rest } = options;
  const job: JobDefinition<string> = {
    name: 'test-job',
    concurrency: 2,
    pollIntervalMs: 60_000,
    async claim(limit) {
      state.claims++;
      if (state.failClaims > 0) {
        state.failClaims--;
        throw new Error('claim broke');
      }
      const rows = state.queue.splice(0, limit);
      if (rows.length === 0) state.emptyClaims++;
      return rows;
    },
    async run(item, signal) {
      state.running++;
      state.maxRunning = Math.max(state.maxRunning, state.running);
      try {
        await run?.(item, signal);
        state.ran.push(item);
      } finally {
        state.running--;
      }
    },
    async sweep(now) {
      state.sweeps.push(now);
    },
    describe: (item) => ({ item }),
    ...rest,
  };
  return { state, job };
}

describe('job runner', async () => {
  const database = await testDatabase();
  const clock = manualClock();

  function runnerFor(job: JobDefinition<string>, logger: FastifyBaseLogger = capturingLogger().logger) {
    return createJobRunner({ database, clock, logger, job });
  }

  it('runDueOnce sweeps at the clock time, claims up to the concurrency and runs the rows', async () => {
    const { state, job } = queueJob({ concurrency: 2 });
    state.queue.push('a', 'b', 'c');
    const runner = runnerFor(job);
    assert.equal(await runner.runDueOnce(), 2);
    assert.deepEqual(state.ran, ['a', 'b']);
    assert.deepEqual(state.sweeps, [clock.now()]);
    assert.equal(await runner.runDueOnce(), 1);
    assert.equal(await runner.runDueOnce(), 0);
    assert.deepEqual(state.ran, ['a', 'b', 'c']);
  });

  it('runDueOnce rethrows a failed run once every row of the batch ended', async () => {
    const { state, job } = queueJob({
      concurrency: 2,
      run: async (item) => {
        if (item === 'bad') throw new Error('run broke');
      },
    });
    state.queue.push('bad', 'good');
    await assert.rejects(runnerFor(job).runDueOnce(), /run broke/);
    assert.deepEqual(state.ran, ['good']);
  });

  it('keeps at most `concurrency` rows in flight, and claims again as soon as a slot frees', async () => {
    const gates = new Map<string, ReturnType<typeof gate>>();
    const items = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    for (const item of items) gates.set(item, gate());
    // No useful polling: only a freed slot makes the loop claim again.
    const { state, job } = queueJob({ concurrency: 3, run: (item) => gates.get(item)!.opened });
    state.queue.push(...items);
    const runner = runnerFor(job);
    await runner.start();
    try {
      await until(() => state.running === 3, 'three rows run');
      await settle();
      assert.equal(state.running, 3);
      assert.deepEqual(state.queue, ['d', 'e', 'f', 'g']);
      for (const item of items) {
        gates.get(item)!.open();
        await until(() => state.ran.includes(item), `${item} ran`);
      }
      assert.equal(state.maxRunning, 3);
      assert.deepEqual(state.ran, items);
    } finally {
      await runner.stop();
    }
  });

  it('wakes on the in-process signal (platform.events.wake) without waiting for its polling', async () => {
    const wake = createWakeSignal();
    const { state, job } = queueJob({ wake });
    const runner = runnerFor(job);
    await runner.start();
    try {
      await until(() => state.emptyClaims >= 1, 'the loop found nothing and sleeps');
      state.queue.push('x');
      wake.nudge();
      await until(() => state.ran.includes('x'), 'x ran');
    } finally {
      await runner.stop();
    }
  });

  it('wakes on runner.nudge() without waiting for its polling', async () => {
    const { state, job } = queueJob();
    const runner = runnerFor(job);
    await runner.start();
    try {
      await until(() => state.emptyClaims >= 1, 'the loop found nothing and sleeps');
      state.queue.push('y');
      runner.nudge();
      await until(() => state.ran.includes('y'), 'y ran');
    } finally {
      await runner.stop();
    }
  });

  it('polls as the safety net', async () => {
    const { state, job } = queueJob({ pollIntervalMs: 10 });
    const runner = runnerFor(job);
    await runner.start();
    try {
      await until(() => state.emptyClaims >= 1, 'the loop found nothing and sleeps');
      state.queue.push('z');
      await until(() => state.ran.includes('z'), 'z ran');
    } finally {
      await runner.stop();
    }
  });

  it('start() is idempotent: one loop, one subscription', async () => {
    let subscribed = 0;
    let unsubscribed = 0;
    const wake: WakeSource = {
      subscribe() {
        subscribed++;
        return () => unsubscribed++;
      },
    };
    const { state, job } = queueJob({ wake, concurrency: 1 });
    const runner = runnerFor(job);
    await Promise.all([runner.start(), runner.start()]);
    await runner.start();
    await until(() => state.emptyClaims >= 1, 'the loop claimed');
    await settle();
    assert.equal(state.claims, 1, 'one loop claimed once');
    assert.equal(subscribed, 1);
    await runner.stop();
    await runner.stop();
    assert.equal(unsubscribed, 1);
  });

  it('stop() stops claiming, aborts the signal and waits for the rows in flight', async () => {
    const release = gate();
    const signals: AbortSignal[] = [];
    const { state, job } = queueJob({
      run: async (_item, signal) => {
        signals.push(signal);
        await release.opened;
      },
    });
    state.queue.push('a');
    const runner = runnerFor(job);
    await runner.start();
    await until(() => state.running === 1, 'a runs');
    let stopped = false;
    const stopping = runner.stop().then(() => {
      stopped = true;
    });
    await settle();
    assert.equal(stopped, false, 'stop() waits for the row in flight');
    assert.equal(signals[0].aborted, true);
    release.open();
    await stopping;
    assert.deepEqual(state.ran, ['a']);
    const claims = state.claims;
    state.queue.push('b');
    runner.nudge();
    await settle();
    assert.equal(state.claims, claims, 'no claim after stop()');
    assert.deepEqual(state.queue, ['b']);
  });

  it('stop() waits at most stopTimeoutMs for a row that never ends', { timeout: 10_000 }, async () => {
    const { logger, lines } = capturingLogger();
    const { state, job } = queueJob({ stopTimeoutMs: 20, run: () => new Promise(() => undefined) });
    state.queue.push('stuck');
    const runner = runnerFor(job, logger);
    await runner.start();
    await until(() => state.running === 1, 'the row runs');
    await runner.stop();
    assert.ok(lines.some((l) => l.msg === 'test-job: stopped with rows still in flight'), JSON.stringify(lines));
  });

  it('logs a failed run with its row and carries on', async () => {
    const { logger, lines } = capturingLogger();
    const { state, job } = queueJob({
      concurrency: 1,
      run: async (item) => {
        if (item === 'bad') throw new Error('run broke');
      },
    });
    state.queue.push('bad', 'good');
    const runner = runnerFor(job, logger);
    await runner.start();
    try {
      await until(() => state.ran.includes('good'), 'good ran');
    } finally {
      await runner.stop();
    }
    const failure = lines.find((l) => l.msg === 'test-job: run failed');
    assert.ok(failure, JSON.stringify(lines));
    assert.deepEqual([failure.level, failure.job, failure.item], [50, 'test-job', 'bad']);
  });

  it('logs a failed claim and claims again', async () => {
    const { logger, lines } = capturingLogger();
    const { state, job } = queueJob({ failClaims: 1, pollIntervalMs: 10 });
    state.queue.push('a');
    const runner = runnerFor(job, logger);
    await runner.start();
    try {
      await until(() => state.ran.includes('a'), 'a ran');
    } finally {
      await runner.stop();
    }
    assert.ok(lines.some((l) => l.msg === 'test-job: claim failed' && l.level === 50), JSON.stringify(lines));
  });

  it('sweeps at most once per sweepIntervalMs of the clock', async () => {
    const { state, job } = queueJob({ pollIntervalMs: 5, sweepIntervalMs: 60_000 });
    const runner = runnerFor(job);
    await runner.start();
    try {
      await until(() => state.claims >= 3, 'three claims');
      assert.deepEqual(state.sweeps, [clock.now()]);
      clock.advance(60_000);
      await until(() => state.sweeps.length === 2, 'a second sweep');
      assert.deepEqual(state.sweeps[1], clock.now());
    } finally {
      await runner.stop();
    }
  });

  it('a periodic job runs one pass at a time, again and again, and stop() aborts the pass', async () => {
    let passes = 0;
    let running = 0;
    let maxRunning = 0;
    let abortedPass = false;
    const job = periodicJob({
      name: 'periodic-test',
      intervalMs: 5,
      firstDelayMs: 0,
      async run(signal) {
        passes++;
        running++;
        maxRunning = Math.max(maxRunning, running);
        if (passes === 3) {
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
          abortedPass = true;
        }
        running--;
      },
    });
    const runner = createJobRunner({ database, clock, logger: capturingLogger().logger, job });
    await runner.start();
    await until(() => passes === 3, 'three passes');
    await runner.stop();
    assert.equal(abortedPass, true);
    assert.equal(passes, 3);
    assert.equal(maxRunning, 1);
  });

  it('refuses a channel that is not a plain identifier', () => {
    assert.throws(() => runnerFor({ ...queueJob().job, channel: 'x; drop table y' }), /invalid channel/);
  });

  describe('LISTEN/NOTIFY', { skip: !usingPostgres() && 'PostgreSQL only (TEST_DATABASE_URL)' }, () => {
    it('wakes on a NOTIFY of its channel, and listens again after losing the connection', async () => {
      const channel = `test_jobs_${randomBytes(6).toString('hex')}`;
      const { logger, lines } = capturingLogger();
      const { state, job } = queueJob({ channel });
      const runner = runnerFor(job, logger);
      await runner.start();
      try {
        await until(() => state.emptyClaims >= 1, 'the loop found nothing and sleeps');
        state.queue.push('n1');
        await sql`select pg_notify(${channel}, '')`.execute(database.db);
        await until(() => state.ran.includes('n1'), 'n1 ran');

        // The listening connection dies: the runner connects again and LISTENs anew.
        const killed = await sql<{ pid: number }>`
          select pg_terminate_backend(pid) as ok, pid from pg_stat_activity where query = ${`LISTEN ${channel}`}`.execute(database.db);
        assert.equal(killed.rows.length, 1);
        await until(() => lines.some((l) => l.msg === 'test-job: LISTEN connection lost; polling continues, reconnecting'), 'the loss is noticed');
        const claims = state.claims;
        // Listening again wakes the loop once (something may have become due meanwhile).
        await until(() => state.claims > claims, 'listening again');
        state.queue.push('n2');
        await sql`select pg_notify(${channel}, '')`.execute(database.db);
        await until(() => state.ran.includes('n2'), 'n2 ran');
      } finally {
        await runner.stop();
      }
      const left = await sql`select pid from pg_stat_activity where query = ${`LISTEN ${channel}`} and state = 'idle'`.execute(database.db);
      assert.equal(left.rows.length, 0, 'the listening connection is given back on stop()');
    });
  });
});
