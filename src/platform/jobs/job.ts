// A background job as the process runs it. Each module hands its own (`create<Name>Module(...).jobs`)
// to the composition root (src/app.ts), which keeps them all in one list, in start order;
// src/server.ts starts that list (ROLE=all|worker) once the server listens, and both the shutdown
// and the app's onClose hook stop it, last started first.

export interface Job {
  /** What the job does, for logs and tests (its runner's name). */
  readonly name: string;
  /** Starts claiming (idempotent). */
  start(): Promise<void> | void;
  /** Stops claiming and waits (bounded) for the work in flight; does nothing on a job not running. */
  stop(): Promise<void>;
}

/** Starts the jobs one after the other, in list order. */
export async function startJobs(jobs: readonly Job[]): Promise<void> {
  for (const job of jobs) await job.start();
}

/**
 * Stops the jobs one after the other, last started first: a job that feeds another (the campaign
 * dialer and the schedules queue calls for the calls dialer) stops before the one it feeds.
 */
export async function stopJobs(jobs: readonly Job[]): Promise<void> {
  for (const job of [...jobs].reverse()) await job.stop();
}
