import { type Kysely, sql } from 'kysely';

// After the call (DESIGN part 9): the recording and the analysis of an ended call run as a
// durable job on the call row itself. The row keeps each step's status (pending | ready | failed)
// and error, the raw tracks' length, and the job's bookkeeping: attempts, when the next attempt
// is due (null once call.ended was emitted), the lease, and when the last events were emitted.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('calls')
    .addColumn('recording_status', 'text')
    .addColumn('recording_error', 'text')
    .addColumn('recording_samples', 'integer')
    .addColumn('analysis_status', 'text')
    .addColumn('analysis_error', 'text')
    .addColumn('post_call_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('post_call_due_at', 'timestamptz')
    .addColumn('post_call_lease_holder', 'text')
    .addColumn('post_call_lease_expires_at', 'timestamptz')
    .addColumn('ended_event_at', 'timestamptz')
    .execute();
  // The post-call queue: calls whose recording, analysis or last events are still to come.
  await db.schema
    .createIndex('calls_post_call_due_idx')
    .on('calls')
    .columns(['post_call_due_at', 'id'])
    .where(sql.ref('post_call_due_at'), 'is not', null)
    .execute();
}
