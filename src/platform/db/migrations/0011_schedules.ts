import { type Kysely, sql } from 'kysely';

// Schedules: one outbound call placed at a given time. The firing worker finds due rows through a
// partial index on scheduled_at over the rows still `scheduled`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('to_number', 'text', (c) => c.notNull())
    .addColumn('from_number', 'text')
    .addColumn('scheduled_at', 'timestamptz', (c) => c.notNull())
    .addColumn('variables', 'jsonb', (c) => c.notNull())
    .addColumn('metadata', 'jsonb', (c) => c.notNull())
    .addColumn('simulation', 'jsonb')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('call_id', 'text')
    .addColumn('late', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('dispatched_at', 'timestamptz')
    .addColumn('canceled_at', 'timestamptz')
    .addColumn('error', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('schedules_workspace_idx').on('schedules').columns(['workspace_id', 'id']).execute();
  await sql`create index schedules_due_idx on schedules (scheduled_at) where status = 'scheduled'`.execute(db);
}
