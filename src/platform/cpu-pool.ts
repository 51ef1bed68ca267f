import os from 'node:os';
import { Piscina } from 'piscina';
import { AppError } from './errors.ts';

// The app's one pool of worker threads for CPU-heavy work: speech synthesis, MP3 encoding,
// document text extraction, chunking. JavaScript that runs for hundreds of milliseconds on the
// main thread stalls every request of the process (and PGlite, which runs there too); in the
// pool it runs beside the event loop. Bounded: at most `threads` tasks run and at most `queue`
// wait; one more is refused at once with 503 service_unavailable (Retry-After), rather than
// piling up work whose callers time out. A task is a named export of a worker module (see
// providers/tts/worker.ts, modules/knowledge-base/ingest-worker.ts); its input and result cross
// threads by structured clone, so they are plain data (strings, arrays, typed arrays).
//
// Worker threads load task modules through tsx's CommonJS hook (on Node 20 its ES module hooks
// do not reach worker threads): a task module must not use top-level await, and a package
// whose CommonJS entry is unusable (lamejs: a browser script) is loaded with import().

/** A function exported by a worker module, as the pool runs it. Declare with `cpuTask`. */
export interface CpuTask<I, O> {
  /** The worker module's URL. */
  readonly module: string;
  readonly name: string;
  /** Never set: carries the input and output types. */
  readonly types?: (input: I) => O;
}

/**
 * Names an export of a worker module: `cpuTask<typeof worker.encode>(new URL('./worker.ts',
 * import.meta.url), 'encode')`, with `import type * as worker from './worker.ts'` so the caller
 * does not load the module itself.
 */
// biome-ignore lint/suspicious/noExplicitAny: any input type is accepted; the task's own signature gives it.
export function cpuTask<F extends (input: any) => unknown>(module: URL, name: string): CpuTask<Parameters<F>[0], Awaited<ReturnType<F>>> {
  return { module: module.href, name };
}

export interface CpuPoolOptions {
  /** Worker threads (default: one per core, less one for the event loop, at least 1). */
  threads?: number;
  /** Tasks that may wait for a thread (default 8 per thread). */
  queue?: number;
  /** A thread idle this long exits; the next task starts one again (default 60 s). */
  idleTimeoutMs?: number;
  /** A task not done this long after it was handed over (waiting included) is stopped, its thread terminated (default 60 s). */
  taskTimeoutMs?: number;
}

export interface CpuPool {
  readonly threads: number;
  readonly queue: number;
  /** Tasks running or waiting now. */
  readonly pending: number;
  /** Runs `task` on a worker thread; 503 service_unavailable when `threads + queue` tasks are already pending. */
  run<I, O>(task: CpuTask<I, O>, input: I, options?: { timeoutMs?: number }): Promise<O>;
  /** Lets running tasks finish, then stops the threads. */
  close(): Promise<void>;
}

/** What a service needs of the pool. */
export type CpuRunner = Pick<CpuPool, 'run'>;

/**
 * Runs tasks on the calling thread, for scripts and benchmarks that call a service directly to
 * measure something else. The app gives every service its pool.
 */
export const callingThread: CpuRunner = {
  async run<I, O>(task: CpuTask<I, O>, input: I): Promise<O> {
    const loaded = await import(task.module);
    return loaded[task.name](input);
  },
};

/** A task stopped at its time limit (its thread, if it had started, was terminated). */
export class CpuTaskTimeoutError extends Error {
  constructor(task: string, ms: number) {
    super(`${task} did not finish within ${ms} ms`);
    this.name = 'CpuTaskTimeoutError';
  }
}

export const DEFAULT_CPU_THREADS = Math.max(1, os.availableParallelism() - 1);
const QUEUE_PER_THREAD = 8;

export function createCpuPool(options: CpuPoolOptions = {}): CpuPool {
  const threads = Math.max(1, options.threads ?? DEFAULT_CPU_THREADS);
  const queue = Math.max(0, options.queue ?? threads * QUEUE_PER_THREAD);
  const taskTimeoutMs = options.taskTimeoutMs ?? 60_000;
  // Threads start on demand (an app that never previews a voice starts none) and leave when idle.
  const piscina = new Piscina({
    minThreads: 0,
    maxThreads: threads,
    idleTimeout: options.idleTimeoutMs ?? 60_000,
  });
  let pending = 0;

  return {
    threads,
    queue,
    get pending() {
      return pending;
    },

    async run<I, O>(task: CpuTask<I, O>, input: I, runOptions: { timeoutMs?: number } = {}): Promise<O> {
      if (pending >= threads + queue) {
        throw new AppError('service_unavailable', 'the server is busy with other CPU-heavy requests; retry shortly', { headers: { 'retry-after': '1' } });
      }
      const timeoutMs = runOptions.timeoutMs ?? taskTimeoutMs;
      pending++;
      try {
        return (await piscina.run(input, { filename: task.module, name: task.name, signal: AbortSignal.timeout(timeoutMs) })) as O;
      } catch (error) {
        if ((error as Error)?.name === 'AbortError') throw new CpuTaskTimeoutError(task.name, timeoutMs);
        throw error;
      } finally {
        pending--;
      }
    },

    close: () => piscina.close(),
  };
}
