import type { RuntimeClock } from '../ports/clock.ts';

// Runtime clocks. A call session paces audio and times its turns by one of these: real time for
// real calls, simulated time for the sandbox (SANDBOX_SPEED divides it), so a sandbox call at
// speed 50 runs the very same code 50 times faster.

const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Real time (speed 1) or simulated time running `speed` times faster than the wall clock. */
export function createScaledClock(speed = 1): RuntimeClock {
  if (!(speed > 0)) throw new Error(`clock speed must be positive, got ${speed}`);
  const origin = performance.now();
  return {
    scale: 1 / speed,
    now: () => (performance.now() - origin) * speed,
    setTimer(fn, ms) {
      // Node may fire a timer up to a millisecond early; scaled by `speed` that is a long early
      // fire in simulated time, so a timer re-arms until its simulated deadline has passed.
      const deadline = performance.now() + Math.max(0, ms / speed);
      let timer: NodeJS.Timeout;
      const arm = () => {
        // setTimeout takes at most 2^31-1 ms (about 24.8 days; a rich wallet's budget is longer): longer waits re-arm.
        timer = setTimeout(() => (performance.now() >= deadline ? fn() : arm()), Math.min(MAX_TIMEOUT_MS, Math.max(0, deadline - performance.now())));
      };
      arm();
      return { cancel: () => clearTimeout(timer) };
    },
  };
}
