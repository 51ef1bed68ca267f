import type { Kysely } from 'kysely';

// Voice sessions: a headless browser or app session with an agent, carried by a call of direction
// `web` (transcript, recording, latency and cost live on the call). The media token is kept as its
// SHA-256 only.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('voice_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
    .addColumn('call_id', 'text', (c) => c.notNull().references('calls.id').onDelete('cascade'))
    .addColumn('room_name', 'text', (c) => c.notNull().unique())
    .addColumn('external_user_id', 'text', (c) => c.notNull())
    .addColumn('metadata', 'jsonb', (c) => c.notNull())
    .addColumn('transport', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('end_reason', 'text')
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('connected_at', 'timestamptz')
    .addColumn('ended_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('voice_sessions_workspace_idx').on('voice_sessions').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('voice_sessions_token_idx').on('voice_sessions').column('token_hash').execute();
  await db.schema.createIndex('voice_sessions_call_idx').on('voice_sessions').column('call_id').execute();
}
