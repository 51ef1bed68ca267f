import { type Kysely, sql } from 'kysely';

// The events engine: tenant webhooks, immutable events, deliveries (the queue) and attempts.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    .addColumn('events', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text')
    .addColumn('call_id', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_events_workspace_idx').on('webhook_events').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text')
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret', 'text')
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    .addColumn('ordering_key', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('next_trigger', 'text', (c) => c.notNull().defaultTo('scheduled'))
    .addColumn('first_attempt_at', 'timestamptz')
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('last_attempt_at', 'timestamptz')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('lease_holder', 'text')
    .addColumn('lease_expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addCheckConstraint('webhook_deliveries_status_check', sql`status in ('pending', 'succeeded', 'failed', 'dead')`)
    .addCheckConstraint('webhook_deliveries_destination_check', sql`destination in ('agent', 'tenant')`)
    .execute();
  // The queue: only due-able rows are indexed, so the claim stays cheap however long the history.
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .columns(['next_attempt_at', 'id'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  // Per-call ordering check of the claim: earlier pending deliveries with the same key.
  await db.schema
    .createIndex('webhook_deliveries_ordering_idx')
    .on('webhook_deliveries')
    .columns(['ordering_key', 'id'])
    .where(sql<boolean>`status = 'pending' and ordering_key is not null`)
    .execute();
  await db.schema.createIndex('webhook_deliveries_workspace_idx').on('webhook_deliveries').columns(['workspace_id', 'id']).execute();
  await db.schema
    .createIndex('webhook_deliveries_failed_idx')
    .on('webhook_deliveries')
    .columns(['workspace_id', 'id'])
    .where(sql<boolean>`status in ('failed', 'dead')`)
    .execute();
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').column('event_id').execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_excerpt', 'text')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').columns(['delivery_id', 'attempt']).execute();
}
