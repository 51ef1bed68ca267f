import type { Kysely } from 'kysely';

// Trace context (DESIGN part 9, Observability): the W3C traceparent of the work that queued a row
// (the request that placed a call, the call that emitted an event), so that the job running the
// row later, in any process, continues the same trace. Null when tracing is off.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('calls').addColumn('trace_parent', 'text').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('trace_parent', 'text').execute();
}
