// The phases of a process start (src/server.ts), each one's wall time in ms, logged at debug in one
// line once the server listens and its warm-ups are done (bench/startup.bench.ts reads that line).
// Wall time, which on a shared machine also counts the time a phase waited for a core; beside it
// the process's CPU time in each phase (every thread: tsx compiles on a thread of its own, V8
// compiles WebAssembly on others), which a busy machine inflates much less.

export const STARTUP_LOG_MESSAGE = 'start-up phases (ms)';

export interface StartupPhases {
  /** Ends the phase running since the last `end` (or since the process started), naming it; answers the wall ms since the process started at that end. */
  end(name: string): number;
  /** Times `work`, which runs beside the sequence (a warm-up after listening), as the phase `name`. */
  beside<T>(name: string, work: Promise<T>): Promise<T>;
  /** Every phase so far, in the order each ended: wall ms. */
  report(): Record<string, number>;
  /** The same phases' CPU ms (the process's user + system time, every thread); none for `beside` phases. */
  cpu(): Record<string, number>;
}

const round = (ms: number) => Math.round(ms * 10) / 10;
const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/**
 * Starts the clock at the process's own start (`performance.timeOrigin`): the first phase, ended
 * by the first `end`, is Node's start plus loading every module imported before it (with tsx,
 * TypeScript compiled at run time, from its cache when a file was seen before).
 */
export function createStartupPhases(now: () => number = () => performance.now(), cpuNow: () => number = cpuMs): StartupPhases {
  const wall: Record<string, number> = {};
  const cpu: Record<string, number> = {};
  let last = 0;
  let lastCpu = 0;
  return {
    end(name) {
      const t = now();
      const c = cpuNow();
      wall[name] = round((wall[name] ?? 0) + t - last);
      cpu[name] = round((cpu[name] ?? 0) + c - lastCpu);
      last = t;
      lastCpu = c;
      return round(t);
    },
    async beside(name, work) {
      const started = now();
      try {
        return await work;
      } finally {
        wall[name] = round(now() - started);
      }
    },
    report: () => ({ ...wall }),
    cpu: () => ({ ...cpu }),
  };
}
