import { type Kysely, sql } from 'kysely';

// Public utilities: contact messages, newsletter subscriptions, client-side events, and the one
// row naming the demo workspace and agent (its key makes the start-up bootstrap idempotent
// across instances starting at once).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('contact_messages')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('newsletter_subscriptions')
    .addColumn('email', 'text', (c) => c.primaryKey())
    .addColumn('subscribed_at', 'timestamptz', (c) => c.notNull())
    .addColumn('unsubscribed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('public_events')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('properties', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('anonymous_id', 'text')
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('public_events_name_idx').on('public_events').columns(['name', 'occurred_at']).execute();
  // Housekeeping deletes events by age.
  await db.schema.createIndex('public_events_received_idx').on('public_events').column('received_at').execute();

  // Written before the workspace and agent it names (claim first, in the same transaction), so the
  // foreign keys are checked at commit.
  await db.schema
    .createTable('demo_setup')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addForeignKeyConstraint('demo_setup_workspace_fk', ['workspace_id'], 'workspaces', ['id'], (fk) => fk.onDelete('cascade').deferrable().initiallyDeferred())
    .addForeignKeyConstraint('demo_setup_agent_fk', ['agent_id'], 'agents', ['id'], (fk) => fk.onDelete('cascade').deferrable().initiallyDeferred())
    .execute();
}
