import { type Kysely, sql } from 'kysely';

// Calls and what they need: the call rows with their state history, phone numbers, the
// do-not-call list, stored blobs (recordings when BLOB_STORE=postgres), the agent's turn-taking
// settings and the workspace's concurrency limit.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('workspaces')
    // null: the deployment's MAX_CONCURRENT_CALLS.
    .addColumn('max_concurrent_calls', 'integer')
    .execute();

  await db.schema
    .alterTable('agents')
    .addColumn('turn_end_silence_ms', 'integer', (c) => c.notNull().defaultTo(500))
    .addColumn('barge_in_min_ms', 'integer', (c) => c.notNull().defaultTo(250))
    .addColumn('interruptible', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('silence_timeout_seconds', 'integer', (c) => c.notNull().defaultTo(10))
    .execute();

  await db.schema
    .createTable('calls')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('from_number', 'text')
    .addColumn('to_number', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('end_reason', 'text')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_call_id', 'text')
    .addColumn('started_at', 'timestamptz')
    .addColumn('answered_at', 'timestamptz')
    .addColumn('ended_at', 'timestamptz')
    .addColumn('duration_ms', 'integer')
    .addColumn('billed_seconds', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('cost_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('transcript', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('extracted', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('variables', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('simulation', 'jsonb')
    .addColumn('latency', 'jsonb')
    .addColumn('error', 'jsonb')
    .addColumn('campaign_id', 'text')
    .addColumn('schedule_id', 'text')
    .addColumn('transferred_to', 'text')
    .addColumn('recording_key', 'text')
    .addColumn('recording_bytes', 'integer')
    // Set by DELETE: the row stays (status, cost), recording and transcript are gone.
    .addColumn('content_deleted_at', 'timestamptz')
    // The process that runs the call: holder + expiry, renewed while live.
    .addColumn('lease_holder', 'text')
    .addColumn('lease_expires_at', 'timestamptz')
    .addColumn('last_renewed_at', 'timestamptz')
    // A hang-up or transfer asked for on another instance than the one running the call.
    .addColumn('control', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('calls_workspace_idx').on('calls').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('calls_agent_idx').on('calls').columns(['agent_id', 'id']).execute();
  await db.schema.createIndex('calls_campaign_idx').on('calls').columns(['campaign_id']).where(sql.ref('campaign_id'), 'is not', null).execute();
  // The dialer's queue: queued calls, oldest first.
  await db.schema.createIndex('calls_queued_idx').on('calls').columns(['created_at', 'id']).where(sql.ref('status'), '=', 'queued').execute();
  // Live calls: the concurrency count per workspace and the lost-lease sweep.
  await db.schema
    .createIndex('calls_live_idx')
    .on('calls')
    .columns(['workspace_id', 'lease_expires_at'])
    .where(sql<boolean>`status in ('ringing', 'in_progress')`)
    .execute();

  // The state history: one row per transition, written in the transaction of the transition.
  await db.schema
    .createTable('call_status_events')
    .addColumn('call_id', 'text', (c) => c.notNull().references('calls.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('call_status_events_pk', ['call_id', 'seq'])
    .execute();

  await db.schema
    .createTable('phone_numbers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_number_id', 'text')
    .addColumn('capabilities', 'jsonb', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.references('agents.id').onDelete('set null'))
    .addColumn('label', 'text')
    .addColumn('monthly_cost_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  // A number belongs to one workspace at a time (inbound calls find their agent by it).
  await db.schema.createIndex('phone_numbers_number_key').on('phone_numbers').column('number').unique().execute();
  await db.schema.createIndex('phone_numbers_workspace_idx').on('phone_numbers').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('dnc_numbers')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('dnc_numbers_pk', ['workspace_id', 'number'])
    .execute();

  // Blobs when BLOB_STORE=postgres (recordings shared by several instances).
  await db.schema
    .createTable('blobs')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bytea', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
}
