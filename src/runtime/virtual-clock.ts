import type { RuntimeClock, RuntimeTimer } from '../ports/clock.ts';

// Virtual time for a sandbox call (DESIGN part 9, "Sandbox time is virtual"). Each call has a clock
// of its own that moves only while the call waits on time — audio paced out, silence, the simulated
// callee's pauses, simulated provider latencies — and stands still while the platform computes:
// the work the runtime hands to `hold` (speech recognition, the engine, synthesis, the callee's
// rendering). Time jumps from one timer to the next once nothing is held and the event loop has run
// what the last timer set off (its promise continuations, then one turn of the loop), so the same
// call gives the same timeline on an idle or a saturated machine, at any speed. `speed` only caps
// virtual time against the wall (virtual ms since the start ≤ speed × wall ms since the start);
// Infinity ("max") runs as fast as the work allows.

interface VirtualTimer {
  at: number;
  fn: () => void;
  live: boolean;
}

export interface VirtualClock extends RuntimeClock {
  hold<T>(work: Promise<T>): Promise<T>;
  /** Work held now (tests and diagnostics). */
  readonly held: number;
}

export function createVirtualClock(options: { speed: number }): VirtualClock {
  const { speed } = options;
  if (!(speed > 0)) throw new Error(`clock speed must be positive, got ${speed}`);
  const wallOrigin = performance.now();
  let now = 0;
  let held = 0;
  /** Pending timers in firing order: by deadline, equal deadlines in the order they were set. A call has a handful. */
  const timers: VirtualTimer[] = [];
  let wake: { kind: 'immediate'; handle: NodeJS.Immediate } | { kind: 'timeout'; handle: NodeJS.Timeout } | null = null;

  function insert(timer: VirtualTimer) {
    let i = timers.length;
    while (i > 0 && timers[i - 1].at > timer.at) i--;
    timers.splice(i, 0, timer);
  }
  function head(): VirtualTimer | undefined {
    while (timers.length > 0 && !timers[0].live) timers.shift();
    return timers[0];
  }

  function cancelWake() {
    if (!wake) return;
    if (wake.kind === 'immediate') clearImmediate(wake.handle);
    else clearTimeout(wake.handle);
    wake = null;
  }

  /** Arms the next step: after the current turn of the event loop, when nothing is held and a timer waits. */
  function schedule() {
    if (wake || held > 0 || !head()) return;
    wake = { kind: 'immediate', handle: setImmediate(step) };
  }

  /** Fires the earliest timers, once their virtual time is allowed by the wall (speed cap). */
  function step() {
    wake = null;
    if (held > 0) return;
    const next = head();
    if (!next) return;
    if (Number.isFinite(speed)) {
      const wallWait = wallOrigin + next.at / speed - performance.now();
      if (wallWait > 0) {
        wake = { kind: 'timeout', handle: setTimeout(step, Math.min(2 ** 31 - 1, Math.ceil(wallWait))) };
        return;
      }
    }
    if (next.at > now) now = next.at;
    // Every timer due at this instant fires in this step, in the order they were set (a call's
    // 20 ms beats coincide: the callee's frame, the agent's frame); what they set off runs before the next.
    const due: VirtualTimer[] = [];
    while (timers.length > 0 && timers[0].at <= now) {
      const timer = timers.shift() as VirtualTimer;
      if (timer.live) due.push(timer);
    }
    for (const timer of due) {
      if (!timer.live) continue;
      timer.live = false;
      timer.fn();
    }
    schedule();
  }

  return {
    scale: Number.isFinite(speed) ? 1 / speed : 0,
    now: () => now,
    setTimer(fn, ms): RuntimeTimer {
      const timer: VirtualTimer = { at: now + Math.max(0, ms), fn, live: true };
      insert(timer);
      schedule();
      return {
        cancel: () => {
          timer.live = false;
        },
      };
    },
    hold<T>(work: Promise<T>): Promise<T> {
      held++;
      cancelWake();
      return work.finally(() => {
        held--;
        schedule();
      });
    },
    get held() {
      return held;
    },
  };
}
