import { type Kysely, sql } from 'kysely';

// Knowledge bases, their sources and the chunks retrieval searches (full-text via a GIN-indexed
// tsvector; optional embeddings as real[]).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('knowledge_bases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('language', 'text', (c) => c.notNull().defaultTo('en'))
    .addColumn('ts_config', 'text', (c) => c.notNull().defaultTo('english'))
    .addColumn('content_version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('knowledge_bases_workspace_idx').on('knowledge_bases').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('knowledge_sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('knowledge_base_id', 'text', (c) => c.notNull().references('knowledge_bases.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('filename', 'text')
    .addColumn('format', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('content', 'text')
    .addColumn('chunk_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('knowledge_sources_kb_idx').on('knowledge_sources').columns(['knowledge_base_id', 'id']).execute();

  await db.schema
    .createTable('knowledge_chunks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('knowledge_base_id', 'text', (c) => c.notNull().references('knowledge_bases.id').onDelete('cascade'))
    .addColumn('source_id', 'text', (c) => c.notNull().references('knowledge_sources.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('tsv', sql`tsvector`, (c) => c.notNull())
    .addColumn('embedding', sql`real[]`)
    .addColumn('embedding_model', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('knowledge_chunks_source_idx').on('knowledge_chunks').columns(['source_id', 'position']).execute();
  await db.schema.createIndex('knowledge_chunks_kb_idx').on('knowledge_chunks').columns(['knowledge_base_id', 'id']).execute();
  await db.schema.createIndex('knowledge_chunks_tsv_idx').on('knowledge_chunks').using('gin').column('tsv').execute();
}
