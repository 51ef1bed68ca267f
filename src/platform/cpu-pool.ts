import os from 'node:os';
import { Piscina } from 'piscina';
import { cpuUnavailable, createThreadGroup, givenUp, type ThreadGroup } from './cpu-thread-group.ts';

// The app's pool of worker threads for CPU-heavy work: speech synthesis, MP3 encoding, document
// text extraction, chunking. JavaScript that runs for hundreds of milliseconds on the main thread
// stalls every request of the process (and PGlite, which runs there too); in the pool it runs
// beside the event loop. A task runs in one of three lanes (DESIGN part 9, "After the call":
// only an HTTP request may be refused as busy):
//  - `request` (the default: work done inside an HTTP request): on the main threads; refused at
//    once with 503 service_unavailable (Retry-After) when `threads + queue` request and live tasks
//    are already pending, rather than piling up work whose callers time out;
//  - `live` (a live call's speech): on the main threads too, never refused: it waits, and a
//    thread that frees takes a waiting live task before any waiting request;
//  - `background` (post-call work: a recording's MP3): on threads of its own (`backgroundThreads`,
//    1 by default) at the lowest priority (nice 19, which on Linux lowers only those threads), so
//    it yields the cores to the event loop and the main threads whenever they want them. A main
//    thread with nothing to do also takes waiting background work, but only once no live task has
//    started for `liveQuietMs` (2 s): a nice-19 thread alone gets ~1.5 % of a core beside any
//    busy thread, so a loaded machine would hold recordings back for minutes after their calls
//    ended, while no live call needs the main threads. Its queue is not bounded in count: its
//    callers (jobs) bound it by their concurrency.
// A task's time limit counts its running time only, from the moment a thread is free for it;
// waiting in a queue does not count. A task is a named export of a worker module (see
// providers/tts/worker.ts, modules/knowledge-base/ingest-worker.ts); its input and result cross
// threads by structured clone, so they are plain data (strings, arrays, typed arrays).
//
// Worker threads load task modules through tsx's CommonJS hook (on Node 20 its ES module hooks
// do not reach worker threads): a task module must not use top-level await, and a package
// whose CommonJS entry is unusable (a browser script, say) is loaded with import().

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

export const CPU_LANES = ['request', 'live', 'background'] as const;
/** Whose work a task is: see the top of this file. */
export type CpuLane = (typeof CPU_LANES)[number];

export interface CpuRunOptions {
  /** Default `request`. */
  lane?: CpuLane;
  /** Running time allowed (default the pool's taskTimeoutMs, ten times that in the background lane); time spent waiting for a thread is not counted. */
  timeoutMs?: number;
  /** Gives the task up, waiting or running (its thread is terminated): rejected with 503 service_unavailable. */
  signal?: AbortSignal;
}

export interface CpuPoolOptions {
  /** Main worker threads, for requests and live calls (default: one per core, less one for the event loop, at least 1). */
  threads?: number;
  /** Request and live tasks that may wait for a main thread before a request is refused (default 8 per thread). */
  queue?: number;
  /** Background threads, at the lowest priority (default 1). */
  backgroundThreads?: number;
  /** A thread idle this long exits; the next task starts one again (default 60 s). */
  idleTimeoutMs?: number;
  /** A task still running this long after it started is stopped, its thread terminated (default 60 s). */
  taskTimeoutMs?: number;
  /** Free main threads take waiting background work once no live task has started for this long (default 2 s). */
  liveQuietMs?: number;
}

export interface CpuPool {
  readonly threads: number;
  readonly queue: number;
  readonly backgroundThreads: number;
  /** Request and live tasks running or waiting on the main threads now. */
  readonly pending: number;
  /** Background tasks running or waiting now. */
  readonly backgroundPending: number;
  /**
   * Runs `task` on a worker thread of its lane. A request is refused with 503 service_unavailable
   * when `threads + queue` tasks are already pending on the main threads; live and background
   * tasks wait their turn. After close(), every lane is refused.
   */
  run<I, O>(task: CpuTask<I, O>, input: I, options?: CpuRunOptions): Promise<O>;
  /**
   * Refuses new tasks, rejects those still waiting (503 service_unavailable), lets running request
   * and live tasks finish, stops the threads. Running background tasks are stopped, not awaited
   * (rejected with 503 too): their work is durable and redone by its job's next attempt, and a
   * starved low-priority thread must not hold a shutdown past its grace period.
   */
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

/** A task stopped at its time limit (its thread was terminated). */
export class CpuTaskTimeoutError extends Error {
  constructor(task: string, ms: number) {
    super(`${task} did not finish within ${ms} ms`);
    this.name = 'CpuTaskTimeoutError';
  }
}

export const DEFAULT_CPU_THREADS = Math.max(1, os.availableParallelism() - 1);
const QUEUE_PER_THREAD = 8;
/** The background threads' nice increment: the lowest priority there is. */
const BACKGROUND_NICE = 19;

const busy = () => cpuUnavailable('the server is busy with other CPU-heavy requests');
const closing = () => cpuUnavailable('the server is shutting down (its CPU pool closed before the task started)');
const stopped = () => cpuUnavailable('the server is shutting down (its CPU pool stopped the background task)');

export function createCpuPool(options: CpuPoolOptions = {}): CpuPool {
  const threads = Math.max(1, options.threads ?? DEFAULT_CPU_THREADS);
  const queue = Math.max(0, options.queue ?? threads * QUEUE_PER_THREAD);
  const backgroundThreads = Math.max(1, options.backgroundThreads ?? 1);
  const taskTimeoutMs = options.taskTimeoutMs ?? 60_000;
  const idleTimeout = options.idleTimeoutMs ?? 60_000;
  // Threads start on demand (an app that never previews a voice starts none) and leave when idle.
  const liveQuietMs = options.liveQuietMs ?? 2000;
  const main = createThreadGroup(new Piscina({ minThreads: 0, maxThreads: threads, idleTimeout }), threads, 2, () => lendIdleMainThreads());
  // piscina lowers each thread's priority as it starts (nice(2) through its optional dependency
  // @napi-rs/nice; on Linux it applies to the calling thread only, not to the process).
  const background = createThreadGroup(new Piscina({ minThreads: 0, maxThreads: backgroundThreads, idleTimeout, niceIncrement: BACKGROUND_NICE }), backgroundThreads, 1);
  let closed = false;
  let lastLiveAt = Number.NEGATIVE_INFINITY;
  let lendTimer: NodeJS.Timeout | undefined;

  /** Free main threads take waiting background tasks, once live work has been quiet long enough. */
  function lendIdleMainThreads() {
    if (closed || background.waiting === 0 || !main.idle) return;
    const quietFor = performance.now() - lastLiveAt;
    if (quietFor >= liveQuietMs) {
      while (background.lend(main));
    } else if (!lendTimer) {
      lendTimer = setTimeout(() => {
        lendTimer = undefined;
        lendIdleMainThreads();
      }, liveQuietMs - quietFor).unref();
    }
  }

  async function runIn<I, O>(group: ThreadGroup, priority: number, task: CpuTask<I, O>, input: I, timeoutMs: number, given?: AbortSignal): Promise<O> {
    if (given?.aborted) throw givenUp();
    const turn = group.turn(priority, given);
    if (group === background) lendIdleMainThreads();
    const on = await turn;
    try {
      const limit = AbortSignal.timeout(timeoutMs);
      const signal = given ? AbortSignal.any([limit, given]) : limit;
      return (await on.piscina.run(input, { filename: task.module, name: task.name, signal })) as O;
    } catch (error) {
      if (given?.aborted) throw givenUp();
      if ((error as Error)?.name === 'AbortError') throw new CpuTaskTimeoutError(task.name, timeoutMs);
      if (closed && on === background) throw stopped();
      throw error;
    } finally {
      on.release();
    }
  }

  return {
    threads,
    queue,
    backgroundThreads,
    get pending() {
      return main.pending;
    },
    get backgroundPending() {
      return background.pending;
    },

    async run<I, O>(task: CpuTask<I, O>, input: I, runOptions: CpuRunOptions = {}): Promise<O> {
      const lane = runOptions.lane ?? 'request';
      if (closed) throw closing();
      if (lane === 'request' && main.pending >= threads + queue) throw busy();
      // A background thread runs at the lowest priority and may be starved for minutes by the work it
      // yields to: its limit (ten times the task limit) stops a task that never ends, not a busy machine.
      const timeoutMs = runOptions.timeoutMs ?? (lane === 'background' ? taskTimeoutMs * 10 : taskTimeoutMs);
      if (lane === 'background') return runIn(background, 0, task, input, timeoutMs, runOptions.signal);
      if (lane === 'live') lastLiveAt = performance.now();
      return runIn(main, lane === 'live' ? 0 : 1, task, input, timeoutMs, runOptions.signal);
    },

    async close() {
      closed = true;
      clearTimeout(lendTimer);
      main.reject(closing);
      background.reject(closing);
      await Promise.all([main.piscina.close(), background.piscina.destroy()]);
    },
  };
}
