import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as wallDelay } from 'node:timers/promises';
import { createScaledClock } from './clock.ts';
import { settlesBeforeWall } from './test-helpers.ts';

// The runtime clock: simulated time never runs ahead of a timer's deadline, at any speed, and a
// wait longer than setTimeout's limit (a rich wallet's call budget) waits rather than firing at once.

describe('runtime clock', () => {
  it('never fires a timer before its deadline in simulated time (speed 50)', async () => {
    const clock = createScaledClock(50);
    const early: number[] = [];
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const ms = 100 + i * 37;
        const due = clock.now() + ms;
        return new Promise<void>((resolve) =>
          clock.setTimer(() => {
            if (clock.now() < due) early.push(due - clock.now());
            resolve();
          }, ms),
        );
      }),
    );
    assert.deepEqual(early, []);
  });

  it('waits out a timer longer than 2^31-1 ms instead of firing it at once, and cancels it', async () => {
    const clock = createScaledClock(1);
    let fired = false;
    // Node clamps an over-long setTimeout to 1 ms with a TimeoutOverflowWarning: then the timer
    // would fire at once, or spin re-arming every millisecond.
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const thirtyDays = 30 * 86_400_000;
    const timer = clock.setTimer(() => {
      fired = true;
    }, thirtyDays);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(fired, false);
    timer.cancel();
    process.off('warning', onWarning);
    assert.deepEqual(warnings, []);
  });

  it('a canceled timer never fires', async () => {
    const clock = createScaledClock(10);
    let fired = false;
    clock.setTimer(() => {
      fired = true;
    }, 100).cancel();
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(fired, false);
  });

  it('refuses a speed that is not positive', () => {
    for (const speed of [0, -1, Number.NaN]) assert.throws(() => createScaledClock(speed), { message: `clock speed must be positive, got ${speed}` });
  });

  it('runs `speed` times the wall from zero, and scales a wall millisecond by 1/speed', async () => {
    const before = performance.now();
    const clock = createScaledClock(10);
    const created = performance.now();
    assert.equal(clock.scale, 0.1);
    await wallDelay(20);
    const after = performance.now();
    const now = clock.now();
    const last = performance.now();
    // Its origin is between `before` and `created`, its reading between `after` and `last`.
    assert.ok(now >= (after - created) * 10 && now <= (last - before) * 10, `${now} simulated ms, ${after - created} to ${last - before} wall ms`);
  });

  it("fires before a wall timer set after it for longer than the timer's scaled wait (ordered, not timed)", async () => {
    // At speed 1000 a 100 ms timer waits 0.1 wall ms; at speed 1 a 50 ms timer waits 50: each
    // must fire before a plain setTimeout of this process's age set just after it (seconds).
    for (const [speed, ms] of [
      [1000, 100],
      [1, 50],
    ]) {
      const clock = createScaledClock(speed);
      const fired = new Promise<void>((resolve) => clock.setTimer(resolve, ms));
      const age = Math.max(500, performance.now());
      assert.equal(await settlesBeforeWall(fired, age), true, `speed ${speed}, ${ms} ms against a ${Math.round(age)} ms wall timer`);
    }
  });
});
