import { type Insertable, type Selectable, sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { KnowledgeBasesTable, KnowledgeSourcesTable, SourceStatus } from './tables.ts';

// Queries of knowledge bases, sources and chunks. Every read takes the workspace id: a row of
// another workspace is not found.
//
// Chunks are written in generations, so that a large document is indexed in many short
// statements (other requests, PGlite's included, run between them) and yet appears at once: an
// ingestion writes its chunks with created_at = the source's updated_at at the time it started
// (its claim), and while the source is `processing`, chunks created at or after that instant are
// hidden from search and lists (VISIBLE_CHUNK). Publishing is one short transaction:
// the source becomes ready and the previous generation is deleted (a delete is cheap; an update
// of every chunk row would re-index each one).

/** Chunks per insert statement: a few milliseconds of PGlite CPU (to_tsvector and the GIN index). */
export const CHUNK_BATCH = 8;
const SOURCE_COLUMNS = ['id', 'knowledge_base_id', 'type', 'title', 'url', 'filename', 'format', 'status', 'error', 'chunk_count', 'bytes', 'created_at', 'updated_at'] as const;

export interface NewChunk {
  text: string;
  embedding: number[] | null;
}

/** Whom new chunks belong to, and how they are indexed. */
export interface ChunkOwner {
  id: string;
  workspaceId: string;
  baseId: string;
  tsConfig: string;
  embeddingModel: string | null;
}

/** SQL condition on chunk `c`: not part of an ingestion still in progress (see the top of this file). */
export const VISIBLE_CHUNK = sql<boolean>`not exists (select 1 from knowledge_sources hs where hs.id = c.source_id and hs.status = 'processing' and c.created_at >= hs.updated_at)`;

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
     * Moves a source to processing unless another ingestion holds it (a processing row younger
     * than `staleBefore`). Returns the claim's instant (the generation of the chunks to write:
     * later than any chunk the source has), or undefined. Chunks left by an abandoned ingestion
     * are deleted first. Run it in a transaction.
     */
    async claimSource(db: Executor, workspaceId: string, baseId: string, id: string, now: Date, staleBefore: Date): Promise<Date | undefined> {
      await db
        .deleteFrom('knowledge_chunks as c')
        .where('c.source_id', '=', id)
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('knowledge_sources as s')
              .select('s.id')
              .whereRef('s.id', '=', 'c.source_id')
              .where('s.workspace_id', '=', workspaceId)
              .where('s.status', '=', 'processing')
              .where('s.updated_at', '<', staleBefore)
              .whereRef('c.created_at', '>=', 's.updated_at'),
          ),
        )
        .execute();
      const claimed = await db
        .updateTable('knowledge_sources')
        .set({ status: 'processing', error: null, updated_at: sql<Date>`greatest(${now}::timestamptz, updated_at + interval '1 millisecond')` })
        .where('workspace_id', '=', workspaceId)
        .where('knowledge_base_id', '=', baseId)
        .where('id', '=', id)
        .where((eb) => eb.or([eb('status', '!=', 'processing'), eb('updated_at', '<', staleBefore)]))
        .returning('updated_at')
        .executeTakeFirst();
      return claimed ? new Date(claimed.updated_at) : undefined;
    },

    /**
     * Records a failed ingestion (if it still holds the source) and drops the chunks it had
     * written; the previous generation stays searchable. Run it in a transaction.
     */
    async markFailed(tx: Executor, id: string, error: string, now: Date, generation: Date) {
      const failed = await tx
        .updateTable('knowledge_sources')
        .set({ status: 'failed' satisfies SourceStatus, error, updated_at: now > generation ? now : generation })
        .where('id', '=', id)
        .where('status', '=', 'processing')
        .where('updated_at', '=', generation)
        .returning('id')
        .executeTakeFirst();
      if (failed) await tx.deleteFrom('knowledge_chunks').where('source_id', '=', id).where('created_at', '>=', generation).execute();
    },

    /**
     * Inserts chunks of generation `generation` (hidden until published), numbered from
     * `firstPosition`. One statement; callers pass CHUNK_BATCH at a time, each in its own
     * transaction, which also keeps GIN's pending list small: flushed at its default 4 MB, it
     * took one insert half a second of PGlite CPU.
     */
    async insertChunkBatch(tx: Executor, owner: ChunkOwner, chunks: NewChunk[], firstPosition: number, generation: Date) {
      if (chunks.length === 0) return;
      await sql`set local gin_pending_list_limit = 64`.execute(tx);
      await tx
        .insertInto('knowledge_chunks')
        .values(
          chunks.map((chunk, i) => ({
            id: newId('chk'),
            workspace_id: owner.workspaceId,
            knowledge_base_id: owner.baseId,
            source_id: owner.id,
            position: firstPosition + i,
            text: chunk.text,
            tsv: sql`to_tsvector(${owner.tsConfig}::regconfig, ${chunk.text})`,
            embedding: chunk.embedding,
            embedding_model: chunk.embedding ? owner.embeddingModel : null,
            created_at: generation,
          })),
        )
        .execute();
    },

    /**
     * Makes generation `generation` the source's chunks: the source becomes ready (if this
     * ingestion still holds it) and older chunks are deleted. False when another ingestion took
     * the source over meanwhile. Run it in a transaction.
     */
    async publishChunks(
      tx: Executor,
      source: { id: string; generation: Date; chunkCount: number },
      update: { stored?: string; bytes: number; format: string | null; title?: string },
      now: Date,
    ): Promise<boolean> {
      const published = await tx
        .updateTable('knowledge_sources')
        .set({
          status: 'ready',
          error: null,
          chunk_count: source.chunkCount,
          bytes: update.bytes,
          format: update.format,
          ...(update.stored !== undefined ? { content: update.stored } : {}),
          ...(update.title ? { title: update.title } : {}),
          updated_at: now > source.generation ? now : source.generation,
        })
        .where('id', '=', source.id)
        .where('status', '=', 'processing')
        .where('updated_at', '=', source.generation)
        .returning('id')
        .executeTakeFirst();
      if (!published) return false;
      await tx.deleteFrom('knowledge_chunks').where('source_id', '=', source.id).where('created_at', '<', source.generation).execute();
      return true;
    },

    /**
     * ANALYZE knowledge_chunks when it has more than doubled since its statistics were taken (at
     * most ~log2(chunks) times in a table's life). PGlite has no autovacuum: without statistics
     * the planner reads every chunk of a base for each query word instead of the GIN index. On
     * PostgreSQL autovacuum usually got there first. Best effort: a failure (another ANALYZE at the
     * same moment) changes nothing.
     */
    async refreshChunkStatistics(db: Executor) {
      try {
        const { rows } = await sql<{ analyzed: number; chunks: number }>`
          select greatest(c.reltuples, 0)::float8 as analyzed, (select coalesce(sum(s.chunk_count), 0)::float8 from knowledge_sources s) as chunks
          from pg_class c where c.oid = 'knowledge_chunks'::regclass`.execute(db);
        const row = rows[0];
        if (row && Number(row.chunks) >= 100 && Number(row.chunks) > 2 * Number(row.analyzed)) await sql`analyze knowledge_chunks`.execute(db);
      } catch {
        // Statistics stay as they were; the next ingestion tries again.
      }
    },

    listChunks(db: Executor, workspaceId: string, sourceId: string, page: PageRequest) {
      let query = db
        .selectFrom('knowledge_chunks as c')
        .select(['c.id', 'c.source_id', 'c.position', 'c.text'])
        .where('c.workspace_id', '=', workspaceId)
        .where('c.source_id', '=', sourceId)
        .where(VISIBLE_CHUNK);
      if (page.after !== undefined) query = query.where('c.position', '>', Number(page.after));
      return query.orderBy('c.position', 'asc').limit(page.limit + 1).execute();
    },
  };
}

export type KnowledgeBaseRepo = ReturnType<typeof createKnowledgeBaseRepo>;
