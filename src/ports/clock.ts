// The clock port of the call runtime: time as a call sees it. Implemented by src/runtime/clock.ts
// (real time, scaled) and src/runtime/virtual-clock.ts (a sandbox call's virtual time); adapters
// that pace or simulate audio (the sandbox telephony) take it as given.

/** Time as the runtime sees it: milliseconds, virtual on a sandbox call (virtual-clock.ts), real elsewhere. */
export interface RuntimeClock {
  /** Milliseconds since an arbitrary origin, monotonic. */
  now(): number;
  /** Calls `fn` after `ms` of this clock's time. */
  setTimer(fn: () => void, ms: number): RuntimeTimer;
  /** Real milliseconds per millisecond of this clock (1 in real time, 1/50 at SANDBOX_SPEED 50, 0 at `max`). */
  readonly scale: number;
  /**
   * The platform computes: on a virtual clock time stands still until `work` settles (a sandbox
   * call's timeline then owes nothing to the machine's load). Absent on a real clock.
   */
  hold?<T>(work: Promise<T>): Promise<T>;
}

export interface RuntimeTimer {
  cancel(): void;
}

/** Holds `work` on the clock when it keeps virtual time; a real clock just waits for it. */
export function held<T>(clock: RuntimeClock, work: Promise<T>): Promise<T> {
  return clock.hold ? clock.hold(work) : work;
}
