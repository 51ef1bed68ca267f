import type { WebhookAttempt } from '../../../../sdks/typescript/src/index.ts';

// How one delivery attempt reads on the webhooks page: its outcome from the receiver's answer.

/** succeeded (a 2xx), refused (another status: 4xx is not retried, 5xx is), or no answer (timeout, connection). */
export function attemptOutcome(attempt: Pick<WebhookAttempt, 'status_code' | 'error'>): 'succeeded' | 'refused' | 'no answer' {
  if (attempt.status_code === null) return 'no answer';
  return attempt.status_code >= 200 && attempt.status_code < 300 ? 'succeeded' : 'refused';
}

/** 85 → "85 ms", 12 400 → "12.4 s". */
export function durationText(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
