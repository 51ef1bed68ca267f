import { type Insertable, type Selectable, sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { KnowledgeBasesTable, KnowledgeSourcesTable, SourceStatus } from './tables.ts';

// Queries of knowledge bases, sources and chunks. Every read takes the workspace id: a row of
// another workspace is not found.

const INSERT_BATCH = 200;
const SOURCE_COLUMNS = ['id', 'knowledge_base_id', 'type', 'title', 'url', 'filename', 'format', 'status', 'error', 'chunk_count', 'bytes', 'created_at', 'updated_at'] as const;

export interface NewChunk {
  text: string;
  embedding: number[] | null;
}

function withStats(db: Executor) {
  return db
    .selectFrom('knowledge_bases as kb')
    .selectAll('kb')
    .select([
      sql<number>`(select count(*)::int from knowledge_sources s where s.knowledge_base_id = kb.id)`.as('source_count'),
      sql<number>`(select coalesce(sum(s.chunk_count), 0)::int from knowledge_sources s where s.knowledge_base_id = kb.id)`.as('chunk_count'),
      sql<number>`(select count(*)::int from knowledge_sources s where s.knowledge_base_id = kb.id and s.status = 'processing')`.as('processing_count'),
    ]);
}

export type KnowledgeBaseRow = Selectable<KnowledgeBasesTable> & { source_count: number; chunk_count: number; processing_count: number };

export function createKnowledgeBaseRepo() {
  return {
    async insertBase(db: Executor, row: Omit<Insertable<KnowledgeBasesTable>, 'content_version' | 'updated_at'>) {
      await db
        .insertInto('knowledge_bases')
        .values({ ...row, updated_at: row.created_at })
        .execute();
    },

    findBase(db: Executor, workspaceId: string, id: string): Promise<KnowledgeBaseRow | undefined> {
      return withStats(db).where('kb.workspace_id', '=', workspaceId).where('kb.id', '=', id).executeTakeFirst();
    },

    listBases(db: Executor, workspaceId: string, page: PageRequest): Promise<KnowledgeBaseRow[]> {
      let query = withStats(db).where('kb.workspace_id', '=', workspaceId);
      if (page.after) query = query.where('kb.id', '<', page.after);
      return query.orderBy('kb.id', 'desc').limit(page.limit + 1).execute();
    },

    async updateBase(db: Executor, workspaceId: string, id: string, patch: Partial<Pick<KnowledgeBasesTable, 'name' | 'description' | 'language' | 'ts_config'>> & { updated_at: Date }) {
      const result = await db.updateTable('knowledge_bases').set(patch).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Re-indexes every chunk of a base with another text search configuration. */
    async reindexBase(db: Executor, id: string, tsConfig: string) {
      await db
        .updateTable('knowledge_chunks')
        .set({ tsv: sql`to_tsvector(${tsConfig}::regconfig, text)` })
        .where('knowledge_base_id', '=', id)
        .execute();
    },

    async deleteBase(db: Executor, workspaceId: string, id: string) {
      const result = await db.deleteFrom('knowledge_bases').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /**
     * Drops a deleted base from the knowledge_base_ids of the workspace's agents, so an agent never
     * holds an id that its own PATCH would then refuse as unknown.
     */
    async detachFromAgents(db: Executor, workspaceId: string, id: string, now: Date) {
      await db
        .updateTable('agents')
        .set({ knowledge_base_ids: sql`knowledge_base_ids - ${id}::text`, updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where(sql<boolean>`knowledge_base_ids @> ${JSON.stringify([id])}::jsonb`)
        .execute();
    },

    /** Marks the base's chunk set as changed (the embedding cache reloads on the next search). */
    async bumpVersion(db: Executor, id: string, now: Date) {
      await db
        .updateTable('knowledge_bases')
        .set((eb) => ({ content_version: eb('content_version', '+', 1), updated_at: now }))
        .where('id', '=', id)
        .execute();
    },

    async insertSource(db: Executor, row: Omit<Insertable<KnowledgeSourcesTable>, 'updated_at'>) {
      return db
        .insertInto('knowledge_sources')
        .values({ ...row, updated_at: row.created_at })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** A source without its extracted text (which can be megabytes); `withContent` adds it. */
    findSource(db: Executor, workspaceId: string, baseId: string, id: string, withContent = false) {
      return db
        .selectFrom('knowledge_sources')
        .select(SOURCE_COLUMNS)
        .$if(withContent, (q) => q.select(['content']))
        .where('workspace_id', '=', workspaceId)
        .where('knowledge_base_id', '=', baseId)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    listSources(db: Executor, workspaceId: string, baseId: string, page: PageRequest) {
      let query = db
        .selectFrom('knowledge_sources')
        .select(SOURCE_COLUMNS)
        .where('workspace_id', '=', workspaceId)
        .where('knowledge_base_id', '=', baseId);
      if (page.after) query = query.where('id', '<', page.after);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },

    async deleteSource(db: Executor, workspaceId: string, baseId: string, id: string) {
      const result = await db
        .deleteFrom('knowledge_sources')
        .where('workspace_id', '=', workspaceId)
        .where('knowledge_base_id', '=', baseId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /**
     * Moves a source to processing unless another ingestion holds it (a processing row
     * younger than `staleBefore`). Returns the claimed id, or undefined.
     */
    claimSource(db: Executor, workspaceId: string, baseId: string, id: string, now: Date, staleBefore: Date) {
      return db
        .updateTable('knowledge_sources')
        .set({ status: 'processing', error: null, updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('knowledge_base_id', '=', baseId)
        .where('id', '=', id)
        .where((eb) => eb.or([eb('status', '!=', 'processing'), eb('updated_at', '<', staleBefore)]))
        .returning('id')
        .executeTakeFirst();
    },

    async markFailed(db: Executor, id: string, error: string, now: Date) {
      await db.updateTable('knowledge_sources').set({ status: 'failed' satisfies SourceStatus, error, updated_at: now }).where('id', '=', id).execute();
    },

    /** Replaces the chunks of a source and records it ready. Run inside a transaction. */
    async replaceChunks(
      db: Executor,
      source: { id: string; workspaceId: string; baseId: string; tsConfig: string; embeddingModel: string | null },
      chunks: NewChunk[],
      update: { content: string; bytes: number; format: string | null; title?: string },
      now: Date,
    ) {
      await db.deleteFrom('knowledge_chunks').where('source_id', '=', source.id).execute();
      for (let i = 0; i < chunks.length; i += INSERT_BATCH) {
        const rows = chunks.slice(i, i + INSERT_BATCH).map((chunk, j) => ({
          id: newId('chk'),
          workspace_id: source.workspaceId,
          knowledge_base_id: source.baseId,
          source_id: source.id,
          position: i + j,
          text: chunk.text,
          tsv: sql`to_tsvector(${source.tsConfig}::regconfig, ${chunk.text})`,
          embedding: chunk.embedding,
          embedding_model: chunk.embedding ? source.embeddingModel : null,
          created_at: now,
        }));
        await db.insertInto('knowledge_chunks').values(rows).execute();
      }
      await db
        .updateTable('knowledge_sources')
        .set({ status: 'ready', error: null, chunk_count: chunks.length, content: update.content, bytes: update.bytes, format: update.format, ...(update.title ? { title: update.title } : {}), updated_at: now })
        .where('id', '=', source.id)
        .execute();
    },

    listChunks(db: Executor, workspaceId: string, sourceId: string, page: PageRequest) {
      let query = db
        .selectFrom('knowledge_chunks')
        .select(['id', 'source_id', 'position', 'text'])
        .where('workspace_id', '=', workspaceId)
        .where('source_id', '=', sourceId);
      if (page.after !== undefined) query = query.where('position', '>', Number(page.after));
      return query.orderBy('position', 'asc').limit(page.limit + 1).execute();
    },
  };
}

export type KnowledgeBaseRepo = ReturnType<typeof createKnowledgeBaseRepo>;
