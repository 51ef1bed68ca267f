import assert from 'node:assert/strict';
import os from 'node:os';
import { threadId } from 'node:worker_threads';
import { after, describe, it } from 'node:test';
import { AppError } from './errors.ts';
import { callingThread, createCpuPool, CpuTaskTimeoutError, cpuTask } from './cpu-pool.ts';
import type * as tasks from './cpu-pool.test-tasks.ts';
import { holdersStarted, newGate, openGate } from './cpu-pool.test-tasks.ts';

const tasksModule = new URL('./cpu-pool.test-tasks.ts', import.meta.url);
const hold = cpuTask<typeof tasks.hold>(tasksModule, 'hold');
const echo = cpuTask<typeof tasks.echo<{ samples: Int16Array; label: string }>>(tasksModule, 'echo');
const explode = cpuTask<typeof tasks.explode>(tasksModule, 'explode');
const whoAmI = cpuTask<typeof tasks.whoAmI>(tasksModule, 'whoAmI');
const stamp = cpuTask<typeof tasks.stamp>(tasksModule, 'stamp');

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

/** This thread's priority before any pool started a thread: lowering the background threads' must not change it. */
const processPriority = os.getPriority(0);

/** Resolves once `count` holders of `gate` run (each on its own thread). */
async function untilHolding(gate: SharedArrayBuffer, count: number) {
  while (holdersStarted(gate) < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('CPU pool', () => {
  const pool = createCpuPool({ threads: 2, queue: 1 });
  after(() => pool.close());

  it('runs a task on another thread and hands back structured data', async () => {
    const gate = newGate();
    openGate(gate);
    const ranOn = await pool.run(hold, { gate });
    assert.notEqual(ranOn, threadId);
    const back = await pool.run(echo, { samples: Int16Array.from([1, -2, 32767]), label: 'pcm' });
    assert.ok(back.samples instanceof Int16Array);
    assert.deepEqual([...back.samples], [1, -2, 32767]);
    assert.equal(back.label, 'pcm');
  });

  it('refuses a task beyond threads + queue with 503 service_unavailable, and takes tasks again once they finish', async () => {
    const gate = newGate();
    const running = [pool.run(hold, { gate }), pool.run(hold, { gate })];
    const waiting = pool.run(hold, { gate });
    await untilHolding(gate, 2);
    assert.equal(pool.pending, 3);
    const refused = await pool.run(hold, { gate }).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(refused instanceof AppError, String(refused));
    assert.equal(refused.code, 'service_unavailable');
    assert.equal(refused.status, 503);
    assert.equal(refused.headers?.['retry-after'], '1');
    openGate(gate);
    const threads = await Promise.all([...running, waiting]);
    assert.equal(new Set(threads.slice(0, 2)).size, 2, 'the two running tasks had a thread each');
    assert.equal(pool.pending, 0);
    assert.equal((await pool.run(echo, { samples: new Int16Array(0), label: 'again' })).label, 'again');
  });

  it('stops a task past its time limit, and the pool goes on working', async () => {
    const gate = newGate(); // never opened
    await assert.rejects(pool.run(hold, { gate }, { timeoutMs: 100 }), (error: unknown) => error instanceof CpuTaskTimeoutError && /hold did not finish within 100 ms/.test(error.message));
    assert.equal(pool.pending, 0);
    assert.equal((await pool.run(echo, { samples: new Int16Array(1), label: 'after' })).label, 'after');
  });

  it("rejects with the task's own error message", async () => {
    await assert.rejects(pool.run(explode, { message: 'bad input' }), /bad input/);
    assert.equal(pool.pending, 0);
  });

  it('callingThread runs the same task on this thread', async () => {
    const gate = newGate();
    openGate(gate);
    assert.equal(await callingThread.run(hold, { gate }), threadId);
  });
});

describe('CPU pool lanes', () => {
  const pool = createCpuPool({ threads: 1, queue: 1, backgroundThreads: 1 });
  after(() => pool.close());

  it('refuses a request when the main threads and queue are full, while live and background tasks wait and all complete', async () => {
    const main = newGate();
    const back = newGate();
    const requests = [pool.run(hold, { gate: main }), pool.run(hold, { gate: main })];
    const backgrounds = Array.from({ length: 5 }, () => pool.run(hold, { gate: back }, { lane: 'background' }));
    await untilHolding(main, 1);
    await untilHolding(back, 1);
    assert.equal(pool.pending, 2);
    const refused = await refusal(pool.run(hold, { gate: main }));
    assert.ok(refused instanceof AppError && refused.code === 'service_unavailable', String(refused));
    // Live tasks are never refused: they wait beyond threads + queue.
    const live = Array.from({ length: 3 }, () => pool.run(hold, { gate: main }, { lane: 'live' }));
    assert.equal(pool.pending, 5);
    assert.equal(pool.backgroundPending, 5);
    openGate(main);
    openGate(back);
    const done = await Promise.all([...requests, ...live, ...backgrounds]);
    assert.equal(done.length, 10);
    assert.equal(pool.pending, 0);
    assert.equal(pool.backgroundPending, 0);
    assert.equal(holdersStarted(main), 5);
    assert.equal(holdersStarted(back), 5);
  });

  it('gives a free main thread to a waiting live task before an earlier waiting request', async () => {
    const gate = newGate();
    const counter = new SharedArrayBuffer(4);
    const holder = pool.run(hold, { gate });
    await untilHolding(gate, 1);
    const request = pool.run(stamp, { counter });
    const live = pool.run(stamp, { counter }, { lane: 'live' });
    openGate(gate);
    await holder;
    assert.deepEqual(await Promise.all([live, request]), [1, 2]);
  });

  it('runs background tasks on a thread of their own, at the lowest priority, beside busy main threads', async () => {
    const main = newGate();
    const back = newGate();
    const mainHolder = pool.run(hold, { gate: main });
    const mainQueued = pool.run(hold, { gate: main }, { lane: 'live' });
    await untilHolding(main, 1);
    // The main thread is held and a live task waits for it: a background task still runs.
    const backgroundHolder = pool.run(hold, { gate: back }, { lane: 'background' });
    await untilHolding(back, 1);
    // whoAmI waits for the background thread, held too.
    const background = pool.run(whoAmI, undefined, { lane: 'background' });
    openGate(back);
    assert.equal(holdersStarted(main), 1, 'the live task still waits for the main thread');
    openGate(main);
    const [mainThread, , backgroundThread] = await Promise.all([mainHolder, mainQueued, backgroundHolder]);
    assert.notEqual(backgroundThread, mainThread);
    const seen = await background;
    assert.equal(seen.threadId, backgroundThread);
    assert.equal(seen.priority, 19);
    const onMain = await pool.run(whoAmI, undefined, { lane: 'live' });
    assert.equal(onMain.threadId, mainThread);
    assert.equal(onMain.priority, processPriority, 'the main threads keep the process priority');
    assert.equal(os.getPriority(0), processPriority, 'the event loop keeps the process priority');
  });

  it('counts only running time toward the time limit, not the wait for a thread', async () => {
    // A limit an echo keeps even on a loaded machine (at load 15 one took over 300 ms to answer).
    const timeoutMs = 2000;
    const gate = newGate();
    const holder = pool.run(hold, { gate });
    await untilHolding(gate, 1);
    const waiting = [
      pool.run(echo, { samples: new Int16Array(1), label: 'request' }, { timeoutMs }),
      pool.run(echo, { samples: new Int16Array(1), label: 'live' }, { lane: 'live', timeoutMs }),
    ];
    const back = newGate();
    const backgroundHolder = pool.run(hold, { gate: back }, { lane: 'background' });
    await untilHolding(back, 1);
    const background = pool.run(echo, { samples: new Int16Array(1), label: 'background' }, { lane: 'background', timeoutMs });
    // Twice their time limit spent waiting.
    await new Promise((resolve) => setTimeout(resolve, 2 * timeoutMs));
    openGate(gate);
    openGate(back);
    await Promise.all([holder, backgroundHolder]);
    assert.deepEqual((await Promise.all([...waiting, background])).map((r) => r.label), ['request', 'live', 'background']);
  });

  it('a signal gives a task up, waiting or running: 503 service_unavailable, its thread free for the next', async () => {
    // Live work just ran: the free main thread does not take the waiting background task.
    const giving = createCpuPool({ threads: 1, queue: 1, backgroundThreads: 1, liveQuietMs: 600_000 });
    after(() => giving.close());
    await giving.run(echo, { samples: new Int16Array(1), label: 'live' }, { lane: 'live' });
    const gate = newGate();
    const running = new AbortController();
    const waiting = new AbortController();
    const held = refusal(giving.run(hold, { gate }, { lane: 'background', signal: running.signal }));
    await untilHolding(gate, 1);
    const queued = refusal(giving.run(echo, { samples: new Int16Array(1), label: 'queued' }, { lane: 'background', signal: waiting.signal }));
    const next = giving.run(echo, { samples: new Int16Array(1), label: 'next' }, { lane: 'background' });
    waiting.abort();
    running.abort();
    for (const error of [await queued, await held]) {
      assert.ok(error instanceof AppError && error.code === 'service_unavailable', String(error));
      assert.match(error.message, /given up/);
    }
    // The gate never opened: the running holder was stopped, and the task after it runs.
    assert.equal((await next).label, 'next');
    assert.equal(giving.backgroundPending, 0);
  });

  it('a free main thread takes waiting background work once no live task has started for liveQuietMs', async () => {
    const lending = createCpuPool({ threads: 1, queue: 1, backgroundThreads: 1, liveQuietMs: 0 });
    after(() => lending.close());
    const gate = newGate();
    const holder = lending.run(hold, { gate }, { lane: 'background' });
    await untilHolding(gate, 1);
    // The background thread stays held: the task can only finish on the main thread.
    const lent = await Promise.race([
      lending.run(whoAmI, undefined, { lane: 'background' }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the background task waited for the held thread')), 30_000)),
    ]);
    openGate(gate);
    assert.notEqual(lent.threadId, await holder);
    assert.equal(lent.priority, processPriority, 'it ran at the main threads\' priority');
  });

  it('while live work is recent, waiting background work keeps to its own threads', async () => {
    const keeping = createCpuPool({ threads: 1, queue: 1, backgroundThreads: 1, liveQuietMs: 600_000 });
    after(() => keeping.close());
    await keeping.run(echo, { samples: new Int16Array(1), label: 'live' }, { lane: 'live' });
    const gate = newGate();
    const holder = keeping.run(hold, { gate }, { lane: 'background' });
    await untilHolding(gate, 1);
    const waiting = keeping.run(whoAmI, undefined, { lane: 'background' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(keeping.backgroundPending, 2);
    assert.equal(keeping.pending, 0, 'the main thread took nothing');
    openGate(gate);
    assert.equal((await waiting).threadId, await holder);
  });

  it('close() lets running tasks finish, stops running background ones and rejects waiting ones with 503 service_unavailable', async () => {
    const closing = createCpuPool({ threads: 1, queue: 1, backgroundThreads: 1 });
    const main = newGate();
    const back = newGate();
    const running = closing.run(hold, { gate: main });
    const backgroundRunning = closing.run(hold, { gate: back }, { lane: 'background' });
    await untilHolding(main, 1);
    await untilHolding(back, 1);
    const waiting = [closing.run(hold, { gate: main }), closing.run(hold, { gate: main }, { lane: 'live' }), closing.run(hold, { gate: back }, { lane: 'background' })].map(refusal);
    const stopped = refusal(backgroundRunning);
    const closed = closing.close();
    // The background task is stopped while its gate is still shut: close() does not wait for it.
    for (const error of [...(await Promise.all(waiting)), await stopped]) {
      assert.ok(error instanceof AppError && error.code === 'service_unavailable', String(error));
      assert.match(error.message, /shutting down/);
    }
    openGate(main);
    assert.equal(typeof (await running), 'number');
    await closed;
    const after = await refusal(closing.run(echo, { samples: new Int16Array(0), label: 'late' }, { lane: 'background' }));
    assert.ok(after instanceof AppError && after.code === 'service_unavailable');
  });
});
