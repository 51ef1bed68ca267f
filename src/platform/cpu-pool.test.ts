import assert from 'node:assert/strict';
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
