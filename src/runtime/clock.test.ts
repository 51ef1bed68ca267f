import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createScaledClock } from './clock.ts';

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
});
