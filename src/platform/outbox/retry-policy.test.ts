import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSchedule } from '../../config.ts';
import { attemptOffsets, judgeStatus, planNextAttempt } from './retry-policy.ts';

describe('retry policy', () => {
  it('judges 2xx delivered, 408/429/5xx/3xx retried, other 4xx failed', () => {
    assert.deepEqual([200, 204, 299].map((s) => judgeStatus(s).kind), ['succeeded', 'succeeded', 'succeeded']);
    assert.deepEqual([408, 429, 500, 503, 301].map((s) => judgeStatus(s).kind), ['retry', 'retry', 'retry', 'retry', 'retry']);
    assert.deepEqual([400, 401, 404, 410, 422].map((s) => judgeStatus(s).kind), ['failed', 'failed', 'failed', 'failed', 'failed']);
  });

  it('schedules agent attempts at the documented offsets from the first attempt, ± 10 % of each gap, then dead', () => {
    const schedule = parseSchedule('WEBHOOK_RETRY_SCHEDULE', '0,1m,5m,30m,2h,6h,24h');
    const first = new Date('2026-11-23T10:00:00.000Z');
    const offsets: number[] = [];
    for (let attempt = 1; attempt < schedule.length; attempt++) {
      for (const random of [0, 0.5, 0.999999]) {
        const plan = planNextAttempt({ outcome: { kind: 'retry' }, attemptCount: attempt, maxAttempts: 7, firstAttemptAt: first, schedule, jitter: 0.1, random: () => random });
        assert.equal(plan.status, 'pending');
        const offset = (plan.nextAttemptAt as Date).getTime() - first.getTime();
        const gap = schedule[attempt] - schedule[attempt - 1];
        assert.ok(Math.abs(offset - schedule[attempt]) <= gap * 0.1 + 1, `attempt ${attempt + 1}: ${offset}`);
        if (random === 0.5) offsets.push(offset);
      }
    }
    assert.deepEqual(offsets, [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 86_400_000]);
    const last = planNextAttempt({ outcome: { kind: 'retry' }, attemptCount: 7, maxAttempts: 7, firstAttemptAt: first, schedule, jitter: 0.1 });
    assert.equal(last.status, 'dead');
  });

  it('always starts a schedule with the first attempt at 0 (`1s,2s` = attempts at 0, 1 s, 2 s)', () => {
    assert.deepEqual(attemptOffsets(parseSchedule('S', '1s,2s')), [0, 1000, 2000]);
    assert.deepEqual(attemptOffsets(parseSchedule('S', '0,1s,2s')), [0, 1000, 2000]);
    assert.equal(attemptOffsets(parseSchedule('S', '0,1m,5m,30m,2h,6h,24h')).length, 7);
  });

  it('ends a manual attempt (max_attempts = attempts made) whatever the schedule, and never retries a failure', () => {
    const schedule = [0, 60_000, 300_000];
    const first = new Date();
    assert.equal(planNextAttempt({ outcome: { kind: 'retry' }, attemptCount: 2, maxAttempts: 2, firstAttemptAt: first, schedule, jitter: 0 }).status, 'dead');
    assert.equal(planNextAttempt({ outcome: { kind: 'failed' }, attemptCount: 1, maxAttempts: 3, firstAttemptAt: first, schedule, jitter: 0 }).status, 'failed');
    assert.equal(planNextAttempt({ outcome: { kind: 'succeeded' }, attemptCount: 1, maxAttempts: 3, firstAttemptAt: first, schedule, jitter: 0 }).status, 'succeeded');
  });
});
