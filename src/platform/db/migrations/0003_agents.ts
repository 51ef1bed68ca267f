import { type Kysely, sql } from 'kysely';

// Agents and their chat-test conversations.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prompt', 'text', (c) => c.notNull())
    .addColumn('first_message', 'text')
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('voice', 'text', (c) => c.notNull())
    .addColumn('llm', 'jsonb', (c) => c.notNull())
    .addColumn('knowledge_base_ids', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('transfer_number', 'text')
    .addColumn('functions', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('extraction_fields', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('end_call_phrases', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('max_duration_seconds', 'integer', (c) => c.notNull())
    .addColumn('voicemail', 'jsonb', (c) => c.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_events', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('webhook_secret', 'text', (c) => c.notNull())
    .addColumn('previous_webhook_secret', 'text')
    .addColumn('webhook_secret_rotated_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('deleted_at', 'timestamptz')
    .execute();
  // The list: a workspace's live agents, newest first.
  await db.schema
    .createIndex('agents_workspace_idx')
    .on('agents')
    .columns(['workspace_id', 'id'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('agent_conversations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('variables', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('turns', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('ended', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('agent_conversations_agent_idx').on('agent_conversations').columns(['agent_id', 'id']).execute();
}
