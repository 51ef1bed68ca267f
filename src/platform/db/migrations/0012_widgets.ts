import { type Kysely, sql } from 'kysely';

// Widgets (an agent embedded in a web page), white-label branding (one per workspace, its domain
// unique across workspaces), and widget conversations: the agents' chat conversations gain the
// widget and the visitor they came from.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('widgets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('theme', 'jsonb', (c) => c.notNull())
    .addColumn('allowed_origins', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('deleted_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('widgets_workspace_idx')
    .on('widgets')
    .columns(['workspace_id', 'id'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('brandings')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('logo_url', 'text')
    .addColumn('favicon_url', 'text')
    .addColumn('primary_color', 'text', (c) => c.notNull())
    .addColumn('accent_color', 'text', (c) => c.notNull())
    .addColumn('support_email', 'text')
    .addColumn('support_url', 'text')
    .addColumn('hide_powered_by', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .alterTable('agent_conversations')
    .addColumn('widget_id', 'text', (c) => c.references('widgets.id').onDelete('set null'))
    .addColumn('visitor_id', 'text')
    .execute();
  await db.schema
    .createIndex('agent_conversations_widget_idx')
    .on('agent_conversations')
    .columns(['widget_id', 'id'])
    .where(sql.ref('widget_id'), 'is not', null)
    .execute();
}
