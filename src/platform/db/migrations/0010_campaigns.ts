import { type Kysely, sql } from 'kysely';

// Campaigns: a contact list dialed by the campaign dialer within the campaign's concurrency and
// calling window. A contact's dial attempts are rows of their own, one per call placed; the
// partial unique index makes "never dialed twice for one attempt" a property of the database.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('campaigns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('from_number', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('concurrency', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('retry_delay_minutes', 'integer', (c) => c.notNull())
    .addColumn('calling_window', 'jsonb')
    .addColumn('default_country', 'text')
    .addColumn('simulation', 'jsonb')
    .addColumn('variable_names', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('pause_reason', 'text')
    .addColumn('started_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .addColumn('canceled_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('campaigns_workspace_idx').on('campaigns').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('campaigns_running_idx').on('campaigns').column('id').where(sql.ref('status'), '=', 'running').execute();

  await db.schema
    .createTable('campaign_contacts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('campaign_id', 'text', (c) => c.notNull().references('campaigns.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('row_number', 'integer', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('variables', 'jsonb', (c) => c.notNull())
    .addColumn('timezone', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('call_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('campaign_contacts_phone_unique', ['campaign_id', 'phone'])
    .execute();
  // The dialer scans a campaign's pending contacts in upload order (retries, having older ids, first once due).
  await db.schema.createIndex('campaign_contacts_due_idx').on('campaign_contacts').columns(['campaign_id', 'status', 'id']).execute();
  await db.schema.createIndex('campaign_contacts_list_idx').on('campaign_contacts').columns(['campaign_id', 'id']).execute();

  await db.schema
    .createTable('campaign_attempts')
    .addColumn('call_id', 'text', (c) => c.primaryKey())
    .addColumn('contact_id', 'text', (c) => c.notNull().references('campaign_contacts.id').onDelete('cascade'))
    .addColumn('campaign_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('end_reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ended_at', 'timestamptz')
    .execute();
  // A call canceled before it was dialed (pause, cancel) does not use up its attempt number.
  await db.schema
    .createIndex('campaign_attempts_once_idx')
    .on('campaign_attempts')
    .columns(['contact_id', 'attempt'])
    .unique()
    .where(sql.ref('status'), '<>', 'canceled')
    .execute();
  // The dialer counts a campaign's unended calls on every pass: only those are indexed.
  await db.schema
    .createIndex('calls_campaign_open_idx')
    .on('calls')
    .column('campaign_id')
    .where(sql<boolean>`status in ('queued', 'ringing', 'in_progress') and campaign_id is not null`)
    .execute();
  await db.schema.createIndex('campaign_attempts_contact_idx').on('campaign_attempts').columns(['contact_id', 'created_at']).execute();
}
