import { sql } from 'kysely';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import type { Executor } from '../../platform/db/schema.ts';
import { workerStatement } from '../../platform/jobs/lease.ts';
import type { CallRow } from './repo.ts';

// The post-call job's statements (DESIGN part 9), apart from the job (./post-call.ts). The call
// row is the job's row: ONE claim statement picks due calls FOR UPDATE SKIP LOCKED, counts the
// attempt and sets the lease (next due time = the lease's expiry, so a call whose worker died is
// simply due again); every result is written only while this holder still owns this attempt.
// They are the journal's writes (journal.ts exposes them): nothing else writes `calls`.

/** Who may record a result: the holder of this attempt's lease. */
export interface PostCallFence {
  id: string;
  holder: string;
  attempt: number;
}

export async function claimPostCalls(database: DatabaseHandle, input: { holder: string; now: Date; leaseMs: number; limit: number }): Promise<CallRow[]> {
  const { holder, now, limit } = input;
  const leaseUntil = new Date(now.getTime() + input.leaseMs);
  const result = await workerStatement(database, (executor) => sql<CallRow>`
      with due as materialized (
        select c.id from calls c
        where c.post_call_due_at <= ${now}
        order by c.post_call_due_at, c.id
        limit ${limit}
        for update of c skip locked
      )
      update calls c set
        post_call_attempts = c.post_call_attempts + 1,
        post_call_lease_holder = ${holder},
        post_call_lease_expires_at = ${leaseUntil},
        post_call_due_at = ${leaseUntil}
      from due where c.id = due.id
      returning c.*`.execute(executor));
  return result.rows;
}

/** One fenced update of a claimed call; true when it applied (the lease was still this attempt's). */
export async function updateFenced(executor: Executor, fence: PostCallFence, set: Record<string, unknown>, now: Date): Promise<boolean> {
  const updated = await executor
    .updateTable('calls')
    .set({ ...set, updated_at: now })
    .where('id', '=', fence.id)
    .where('post_call_lease_holder', '=', fence.holder)
    .where('post_call_attempts', '=', fence.attempt)
    .where('ended_event_at', 'is', null)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** Extends a running attempt's lease (a live worker keeps it however long the MP3 takes; a dead one stops renewing). */
export function renewPostCall(database: DatabaseHandle, fence: PostCallFence, input: { now: Date; leaseMs: number }) {
  const until = new Date(input.now.getTime() + input.leaseMs);
  return workerStatement(database, (executor) => updateFenced(executor, fence, { post_call_lease_expires_at: until, post_call_due_at: until }, input.now));
}

/** A step failed and will be tried again at `dueAt` (`attempts`: the count to keep, one less when the attempt is not counted). */
export function retryPostCall(database: DatabaseHandle, fence: PostCallFence, input: { now: Date; dueAt: Date; attempts: number; recordingError?: string; analysisError?: string }) {
  const set: Record<string, unknown> = { post_call_due_at: input.dueAt, post_call_attempts: input.attempts, post_call_lease_holder: null, post_call_lease_expires_at: null };
  if (input.recordingError) set.recording_error = input.recordingError.slice(0, 500);
  if (input.analysisError) set.analysis_error = input.analysisError.slice(0, 500);
  return workerStatement(database, (executor) => updateFenced(executor, fence, set, input.now));
}
