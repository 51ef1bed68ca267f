import { Worker, type WorkerOptions } from 'node:worker_threads';

// A worker thread running a TypeScript module of ours (through module-worker.mjs, which registers
// tsx in the thread first). `workerData.entry` is reserved for the module's URL.

export function startModuleWorker(entry: URL, options: Omit<WorkerOptions, 'workerData'> & { workerData?: object } = {}): Worker {
  return new Worker(new URL('./module-worker.mjs', import.meta.url), { ...options, workerData: { ...options.workerData, entry: entry.href } });
}

// performance.now() counts from each thread's own start. The monotonic clock (process.hrtime) is
// the same in every thread: its offset is read once per thread, so `monotonicMs()` is one time
// line the threads of the process share (a due time set in one is meant in another).
// Read between two readings of the monotonic clock, the closest of a few (the first calls are slow).
function readOffsetMs(): number {
  let best = { offset: 0, spread: Number.POSITIVE_INFINITY };
  for (let i = 0; i < 5; i++) {
    const before = Number(process.hrtime.bigint()) / 1e6;
    const now = performance.now();
    const after = Number(process.hrtime.bigint()) / 1e6;
    if (after - before < best.spread) best = { offset: (before + after) / 2 - now, spread: after - before };
  }
  return best.offset;
}
const offsetMs = readOffsetMs();

/** Milliseconds on the process's monotonic clock, comparable between threads. */
export function monotonicMs(): number {
  return performance.now() + offsetMs;
}
