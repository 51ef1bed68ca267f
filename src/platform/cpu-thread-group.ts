import type { Piscina } from 'piscina';
import { AppError } from './errors.ts';

// The threads of one piscina and the tasks waiting for them (cpu-pool.ts has two such groups:
// the main threads and the background ones). A task is handed to piscina only once a thread is
// free for it, so piscina never queues and its abort signal (the time limit) starts with the
// task's running time. A group with nothing to do may also take a task waiting in another group
// (`lend`): the pool lets its main threads run background work when no live call needs them.

/** The 503 a CPU task is refused or stopped with, saying why; the client may retry a second later. */
export const cpuUnavailable = (why: string) => new AppError('service_unavailable', `${why}; retry shortly`, { headers: { 'retry-after': '1' } });
export const givenUp = () => cpuUnavailable('the CPU task was given up (its caller is stopping)');

interface Waiter {
  /** The task may start, on a thread of `on`. */
  go(on: ThreadGroup): void;
  fail(error: Error): void;
}

export interface ThreadGroup {
  readonly piscina: Piscina;
  /** Tasks running on its threads (its own and those it took from another group), and its own waiting. */
  readonly pending: number;
  /** Tasks waiting for a thread of this group. */
  readonly waiting: number;
  /** A thread is free and no task of its own waits for one. */
  readonly idle: boolean;
  /**
   * Resolves, with the group whose thread the task runs on, when a thread is free for it (counted
   * as pending at once); `signal` takes it out of the queue (rejected with `givenUp`).
   */
  turn(priority: number, signal?: AbortSignal): Promise<ThreadGroup>;
  /** A task that ran on this group's thread ended. */
  release(): void;
  /** Hands the first waiting task to a free thread of `helper`; false when none waits or `helper` is not idle. */
  lend(helper: ThreadGroup): boolean;
  /** Counts a task taken from another group as running here. */
  adopt(): void;
  /** Rejects every waiting task with a new `error()`. */
  reject(error: () => Error): void;
}

/** Priority queues 0..priorities-1 (0 first, FIFO within one); `onFree` runs when a thread frees with nothing of its own to do. */
export function createThreadGroup(piscina: Piscina, threads: number, priorities: number, onFree: () => void = () => {}): ThreadGroup {
  const queues: Waiter[][] = Array.from({ length: priorities }, () => []);
  let running = 0;
  let queued = 0;

  const next = () => queues.find((q) => q.length > 0)?.shift();

  function dispatch() {
    while (running < threads) {
      const waiter = next();
      if (!waiter) return;
      queued--;
      running++;
      waiter.go(group);
    }
  }

  const group: ThreadGroup = {
    piscina,
    get pending() {
      return running + queued;
    },
    get waiting() {
      return queued;
    },
    get idle() {
      return running < threads && queued === 0;
    },
    turn(priority: number, signal?: AbortSignal): Promise<ThreadGroup> {
      if (group.idle) {
        running++;
        return Promise.resolve(group);
      }
      queued++;
      return new Promise((go, fail) => {
        const onAbort = () => {
          const queue = queues[priority];
          const at = queue.indexOf(waiter);
          if (at < 0) return;
          queue.splice(at, 1);
          queued--;
          fail(givenUp());
        };
        const waiter: Waiter = {
          go: (on) => {
            signal?.removeEventListener('abort', onAbort);
            go(on);
          },
          fail: (error) => {
            signal?.removeEventListener('abort', onAbort);
            fail(error);
          },
        };
        queues[priority].push(waiter);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    release() {
      running--;
      dispatch();
      if (group.idle) onFree();
    },
    lend(helper: ThreadGroup): boolean {
      if (!helper.idle) return false;
      const waiter = next();
      if (!waiter) return false;
      queued--;
      helper.adopt();
      waiter.go(helper);
      return true;
    },
    adopt() {
      running++;
    },
    reject(error: () => Error) {
      for (const queue of queues) for (const waiter of queue.splice(0)) waiter.fail(error());
      queued = 0;
    },
  };
  return group;
}
