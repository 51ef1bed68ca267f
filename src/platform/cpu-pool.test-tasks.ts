// Worker tasks for the CPU pool's own tests (cpu-pool.test.ts) and for tests that need the pool
// busy: `hold` keeps its thread until the test releases the gate, so "all threads busy" is a
// state the test sets up rather than a race it hopes to win.

/** A gate: slot 0 is 0 while closed, slot 1 counts the holders that started. */
export function newGate(): SharedArrayBuffer {
  return new SharedArrayBuffer(8);
}

export function openGate(gate: SharedArrayBuffer): void {
  const slots = new Int32Array(gate);
  Atomics.store(slots, 0, 1);
  Atomics.notify(slots, 0);
}

export function holdersStarted(gate: SharedArrayBuffer): number {
  return Atomics.load(new Int32Array(gate), 1);
}

/** Blocks its thread until the gate opens; answers the thread's id. */
export async function hold(input: { gate: SharedArrayBuffer }): Promise<number> {
  const slots = new Int32Array(input.gate);
  Atomics.add(slots, 1, 1);
  Atomics.wait(slots, 0, 0);
  const { threadId } = await import('node:worker_threads');
  return threadId;
}

export function echo<T>(input: T): T {
  return input;
}

export function explode(input: { message: string }): never {
  throw new Error(input.message);
}

/** The running thread's id and scheduling priority (its nice value). */
export async function whoAmI(): Promise<{ threadId: number; priority: number }> {
  const { threadId } = await import('node:worker_threads');
  const os = await import('node:os');
  return { threadId, priority: os.getPriority(0) };
}

/** Takes the next number of a shared counter: the order in which tasks ran. */
export function stamp(input: { counter: SharedArrayBuffer }): number {
  return Atomics.add(new Int32Array(input.counter), 0, 1) + 1;
}
