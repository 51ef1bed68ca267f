// When a failed attempt is tried again, and after how long. 429 was refused before any work, so
// any method may repeat it; a 5xx or a lost connection may have done the work, so only methods
// that are idempotent by nature, and POSTs carrying an Idempotency-Key (the platform replays the
// first answer), are repeated.

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

export function mayRepeat(method: string, idempotencyKey: string | undefined): boolean {
  return IDEMPOTENT.has(method) || (method === 'POST' && idempotencyKey !== undefined);
}

export function retriableStatus(status: number, method: string, idempotencyKey: string | undefined): boolean {
  if (status === 429) return true;
  return (status === 408 || status >= 500) && mayRepeat(method, idempotencyKey);
}

export interface BackoffOptions {
  /** First delay, milliseconds (default 500). */
  baseDelay: number;
  /** Longest delay, milliseconds (default 8000); a longer Retry-After is still honoured up to 60 s. */
  maxDelay: number;
}

const RETRY_AFTER_CAP_MS = 60_000;

/** Retry-After (seconds or an HTTP date) in milliseconds, if the answer carries one. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), RETRY_AFTER_CAP_MS) : undefined;
}

/** Exponential backoff with jitter: between 75 % and 100 % of base·2^attempt, capped. */
export function backoffMs(attempt: number, options: BackoffOptions, random = Math.random): number {
  const ceiling = Math.min(options.maxDelay, options.baseDelay * 2 ** attempt);
  return Math.round(ceiling * (1 - 0.25 * random()));
}
