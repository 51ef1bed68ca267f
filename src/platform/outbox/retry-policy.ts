// The retry policy in one place: how an attempt's outcome is judged, and when the next attempt
// is due. Schedules are offsets from the first attempt (`0,1m,5m` → attempts at 0, 1 min, 5 min),
// so the total retry window is the last offset however long each attempt took.

export type Outcome =
  /** 2xx. */
  | { kind: 'succeeded' }
  /** 5xx, 408, 429, other non-2xx such as 3xx, timeout, connection error. */
  | { kind: 'retry' }
  /** Any other 4xx, a URL the SSRF guard refuses, a destination that no longer exists. */
  | { kind: 'failed' };

export function judgeStatus(status: number): Outcome {
  if (status >= 200 && status < 300) return { kind: 'succeeded' };
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return { kind: 'failed' };
  return { kind: 'retry' };
}

/**
 * The attempt offsets of a configured schedule. The first attempt is always at 0: a schedule
 * written without it (`1s,2s`, as DESIGN documents WEBHOOK_RETRY_SCHEDULE) lists the retries,
 * so `1s,2s` and `0,1s,2s` both mean attempts at 0, 1 s and 2 s.
 */
export function attemptOffsets(schedule: readonly number[]): number[] {
  return schedule.length > 0 && schedule[0] === 0 ? [...schedule] : [0, ...schedule];
}

export interface PlanInput {
  outcome: Outcome;
  /** Attempts made so far, this one included. */
  attemptCount: number;
  /** Attempts allowed (the schedule's length, or one more after a manual retry). */
  maxAttempts: number;
  firstAttemptAt: Date;
  /** Offsets in ms from the first attempt. */
  schedule: number[];
  /** Fraction of the gap before the next attempt to randomise (0.1 for agent webhooks). */
  jitter: number;
  random?: () => number;
}

export type Plan = { status: 'succeeded' | 'failed' | 'dead'; nextAttemptAt: null } | { status: 'pending'; nextAttemptAt: Date };

/** What becomes of a delivery after an attempt. */
export function planNextAttempt(input: PlanInput): Plan {
  if (input.outcome.kind === 'succeeded') return { status: 'succeeded', nextAttemptAt: null };
  if (input.outcome.kind === 'failed') return { status: 'failed', nextAttemptAt: null };
  const index = input.attemptCount;
  if (index >= input.maxAttempts || index >= input.schedule.length) return { status: 'dead', nextAttemptAt: null };
  const offset = input.schedule[index];
  const gap = offset - (input.schedule[index - 1] ?? 0);
  // ± jitter of the gap: retries of many deliveries that failed together spread out, and the
  // order of attempts of one delivery never changes.
  const noise = input.jitter > 0 ? (((input.random ?? Math.random)() * 2 - 1) * input.jitter * gap) : 0;
  return { status: 'pending', nextAttemptAt: new Date(input.firstAttemptAt.getTime() + offset + Math.round(noise)) };
}
