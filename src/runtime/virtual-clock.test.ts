import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as wallDelay } from 'node:timers/promises';
import { beating, settlesBeforeWall } from './test-helpers.ts';
import { sleep } from './timed-ports.ts';
import { createVirtualClock } from './virtual-clock.ts';

// A sandbox call's virtual clock: time moves only from timer to timer while nothing is held, so the
// same events land at the same virtual times however long the held work takes on the wall.

/**
 * A little conversation: a turn every 300 ms whose "work" takes `workMs(i)` real ms, held, while a
 * 20 ms beat runs beside it (a call's frames): without the hold the beat would move time on during the work.
 */
async function timeline(speed: number, workMs: (i: number) => number): Promise<string[]> {
  const clock = createVirtualClock({ speed });
  const log: string[] = [];
  const stopBeating = beating(clock);
  for (let i = 0; i < 5; i++) {
    await sleep(clock, 300);
    log.push(`turn ${i} at ${clock.now()}`);
    const answer = await clock.hold(wallDelay(workMs(i), `answer ${i}`));
    log.push(`${answer} at ${clock.now()}`);
  }
  stopBeating();
  return log;
}

describe('virtual clock', () => {
  it('gives the same timeline whatever the held work costs on the wall', async () => {
    const quick = await timeline(Number.POSITIVE_INFINITY, () => 0);
    const slow = await timeline(Number.POSITIVE_INFINITY, (i) => 20 + i * 15);
    assert.deepEqual(slow, quick);
    assert.deepEqual(quick.slice(0, 4), ['turn 0 at 300', 'answer 0 at 300', 'turn 1 at 600', 'answer 1 at 600']);
  });

  it('stands still while work is held, even with timers due', async () => {
    const clock = createVirtualClock({ speed: Number.POSITIVE_INFINITY });
    const fired: number[] = [];
    clock.setTimer(() => fired.push(clock.now()), 10);
    let release = () => {};
    const work = clock.hold(new Promise<void>((resolve) => (release = resolve)));
    await wallDelay(30);
    assert.deepEqual(fired, []);
    assert.equal(clock.now(), 0);
    assert.equal(clock.held, 1);
    release();
    await work;
    await wallDelay(5);
    assert.deepEqual(fired, [10]);
    assert.equal(clock.held, 0);
  });

  it('fires timers in deadline order, equal deadlines in the order they were set, and never a canceled one', async () => {
    const clock = createVirtualClock({ speed: Number.POSITIVE_INFINITY });
    const order: string[] = [];
    clock.setTimer(() => order.push('b@20'), 20);
    clock.setTimer(() => order.push('a@10'), 10);
    clock.setTimer(() => order.push('c@20'), 20);
    clock.setTimer(() => order.push('never'), 15).cancel();
    await sleep(clock, 25);
    assert.deepEqual(order, ['a@10', 'b@20', 'c@20']);
    assert.equal(clock.now(), 25);
  });

  it('runs a long wait at once at max speed, and no faster than SANDBOX_SPEED allows against the wall', async () => {
    const max = createVirtualClock({ speed: Number.POSITIVE_INFINITY });
    await sleep(max, 10 * 60_000);
    assert.equal(max.now(), 600_000);
    assert.equal(max.scale, 0);

    const capped = createVirtualClock({ speed: 20 });
    const started = performance.now();
    await sleep(capped, 1000);
    // 1,000 virtual ms at 20× take at least 50 wall ms (a cap, not a speed measurement).
    assert.ok(performance.now() - started >= 49, `took ${performance.now() - started} ms`);
    assert.equal(capped.now(), 1000);
    assert.equal(capped.scale, 1 / 20);
  });

  it('rejects a sleep aborted before its time, and its timer never fires', async () => {
    const clock = createVirtualClock({ speed: Number.POSITIVE_INFINITY });
    const controller = new AbortController();
    const waiting = sleep(clock, 1000, controller.signal);
    controller.abort(new Error('barge-in'));
    await assert.rejects(waiting, /barge-in/);
    await sleep(clock, 2000);
    assert.equal(clock.now(), 2000);
  });

  it('refuses a speed that is not positive', () => {
    for (const speed of [0, -1, Number.NaN]) assert.throws(() => createVirtualClock({ speed }), { message: `clock speed must be positive, got ${speed}` });
  });

  it('a canceled timer moves no time, and one canceled by a timer due with it does not fire', async () => {
    const clock = createVirtualClock({ speed: Number.POSITIVE_INFINITY });
    clock.setTimer(() => assert.fail('canceled'), 100).cancel();
    await wallDelay(5);
    assert.equal(clock.now(), 0, 'the canceled timer is not a step');
    const fired: string[] = [];
    let second = { cancel() {} };
    clock.setTimer(() => {
      fired.push('first');
      second.cancel();
    }, 50);
    second = clock.setTimer(() => fired.push('second'), 50);
    await sleep(clock, 60);
    assert.deepEqual(fired, ['first']);
  });

  it('a capped clock waits its virtual time divided by its speed on the wall (ordered, not timed)', async () => {
    // 1,000 virtual ms at 20x wait 50 wall ms: before a 5 s wall timer set just after.
    const capped = createVirtualClock({ speed: 20 });
    assert.equal(await settlesBeforeWall(sleep(capped, 1000), 5000), true);
  });
});
