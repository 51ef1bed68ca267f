import type { FastifyBaseLogger } from 'fastify';
import type { Selectable } from 'kysely';
import type { WorkspaceContext } from '../../platform/auth/access.ts';
import type { Clock } from '../../platform/clock.ts';
import { callingThread, type CpuRunner } from '../../platform/cpu-pool.ts';
import type { Database, Executor } from '../../platform/db/schema.ts';
import { AppError, invalidField, invalidState, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { assertUrlField, type OutboundClient } from '../../platform/outbound/ssrf-guard.ts';
import { type Page, type PageRequest, toPage } from '../../platform/pagination.ts';
import type { EmbeddingsProvider } from '../../ports/embeddings.ts';
import { type Format, formatOfFile, SUPPORTED_FORMATS_TEXT } from './formats.ts';
import { createIngestion, failureMessage, IngestError } from './ingest.ts';
import { tsConfigFor } from './language.ts';
import type { ChunkOwner, KnowledgeBaseRepo, KnowledgeBaseRow, NewChunk } from './repo.ts';
import type { KnowledgeBase, KnowledgeBaseCreate, KnowledgeBaseUpdate, KnowledgeChunk, KnowledgeSource, SearchResult, SourceCreateJson } from './schemas.ts';
import type { KnowledgeSearch } from './search.ts';
import type { KnowledgeSourcesTable } from './tables.ts';

export { MAX_FILE_BYTES } from './ingest.ts';
/** A source left in processing this long (a crashed ingestion) may be refreshed again. */
const STALE_PROCESSING_MS = 5 * 60_000;

export interface KnowledgeBaseServiceDeps {
  db: Database;
  clock: Clock;
  logger: FastifyBaseLogger;
  config: { allowPrivateUrls: boolean };
  outbound: OutboundClient;
  embeddings?: EmbeddingsProvider;
  repo: KnowledgeBaseRepo;
  search: KnowledgeSearch;
  /** Where extraction and chunking run: the app's pool (default: the calling thread, for scripts). */
  cpu?: CpuRunner;
  /**
   * In the transaction that deletes a base: drops it from the agents that use it (the agents'
   * repo, handed over by the composition root: agents depend on knowledge bases, not the reverse).
   */
  detachFromAgents: (tx: Executor, workspaceId: string, knowledgeBaseId: string, now: Date) => Promise<void>;
}

const iso = (value: Date | string) => new Date(value).toISOString();

export function presentBase(row: KnowledgeBaseRow): KnowledgeBase {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    language: row.language,
    source_count: row.source_count,
    chunk_count: row.chunk_count,
    status: row.processing_count > 0 ? 'processing' : row.source_count === 0 ? 'empty' : 'ready',
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

type SourceRow = Pick<Selectable<KnowledgeSourcesTable>, 'id' | 'knowledge_base_id' | 'type' | 'title' | 'url' | 'filename' | 'status' | 'error' | 'chunk_count' | 'bytes' | 'created_at' | 'updated_at'>;

export function presentSource(row: SourceRow): KnowledgeSource {
  return {
    id: row.id,
    knowledge_base_id: row.knowledge_base_id,
    type: row.type,
    title: row.title,
    ...(row.url !== null ? { url: row.url } : {}),
    ...(row.filename !== null ? { filename: row.filename } : {}),
    status: row.status,
    ...(row.error !== null ? { error: row.error } : {}),
    chunk_count: row.chunk_count,
    bytes: Number(row.bytes),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export interface UploadedFile {
  filename: string;
  mimetype: string;
  bytes: Buffer;
  title?: string;
}

export function createKnowledgeBaseService(deps: KnowledgeBaseServiceDeps) {
  const { db, clock, repo, embeddings } = deps;
  const ingest = createIngestion({ ...deps, cpu: deps.cpu ?? callingThread });

  async function requireBase(ctx: WorkspaceContext, id: string) {
    const base = await repo.findBase(db, ctx.workspaceId, id);
    if (!base) throw notFound('knowledge base');
    return base;
  }

  async function requireSource(ctx: WorkspaceContext, baseId: string, id: string, withContent = false) {
    const source = await repo.findSource(db, ctx.workspaceId, baseId, id, withContent);
    if (!source) throw notFound('knowledge source');
    return source;
  }

  const ownerOf = (ctx: WorkspaceContext, base: { id: string; ts_config: string }, sourceId: string): ChunkOwner => ({
    id: sourceId,
    workspaceId: ctx.workspaceId,
    baseId: base.id,
    tsConfig: base.ts_config,
    embeddingModel: embeddings?.model ?? null,
  });

  const recordFailure = (sourceId: string, error: unknown, generation: Date) =>
    db.transaction().execute((tx) => repo.markFailed(tx, sourceId, failureMessage(error), clock.now(), generation));

  /** Fetches and indexes a URL source held by this ingestion (`generation`); records failure on the row. */
  async function ingestUrl(ctx: WorkspaceContext, base: { id: string; ts_config: string }, source: { id: string; url: string; titleGiven: boolean }, generation: Date) {
    try {
      const fetched = await ingest.fetchUrl(source.url);
      if (fetched.chunks.length === 0) throw new IngestError('the document contains no text');
      const chunks = await ingest.embed(fetched.chunks);
      await ingest.write(ownerOf(ctx, base, source.id), generation, chunks, {
        stored: fetched.stored,
        bytes: fetched.bytes,
        format: fetched.format,
        title: source.titleGiven ? undefined : fetched.title,
      });
    } catch (error) {
      if (!(error instanceof IngestError)) deps.logger.error({ err: error }, 'knowledge source ingestion failed');
      await recordFailure(source.id, error, generation);
    }
  }

  /**
   * A new text or file source: its row first (processing, with its text, so a refresh can redo
   * an interrupted ingestion), then its chunks; ready on return. Gone again if writing fails.
   */
  async function createSource(
    ctx: WorkspaceContext,
    base: { id: string; ts_config: string },
    source: { type: 'text' | 'file'; title: string; filename: string | null; format: Format; stored: string; bytes: number },
    chunks: NewChunk[],
  ) {
    const id = newId('src');
    const now = clock.now();
    await repo.insertSource(db, {
      id,
      workspace_id: ctx.workspaceId,
      knowledge_base_id: base.id,
      type: source.type,
      title: source.title,
      url: null,
      filename: source.filename,
      format: source.format,
      status: 'processing',
      error: null,
      content: source.stored,
      chunk_count: 0,
      bytes: source.bytes,
      created_at: now,
    });
    try {
      await ingest.write(ownerOf(ctx, base, id), now, chunks, { bytes: source.bytes, format: source.format });
    } catch (error) {
      await repo.deleteSource(db, ctx.workspaceId, base.id, id).catch(() => undefined);
      throw error;
    }
    return requireSource(ctx, base.id, id);
  }

  return {
    async create(ctx: WorkspaceContext, body: KnowledgeBaseCreate): Promise<KnowledgeBase> {
      const now = clock.now();
      const id = newId('kb');
      const language = body.language ?? 'en';
      await repo.insertBase(db, { id, workspace_id: ctx.workspaceId, name: body.name, description: body.description ?? null, language, ts_config: tsConfigFor(language), created_at: now });
      return presentBase(await requireBase(ctx, id));
    },

    async list(ctx: WorkspaceContext, page: PageRequest): Promise<Page<KnowledgeBase>> {
      return toPage(await repo.listBases(db, ctx.workspaceId, page), page, (r) => r.id, presentBase);
    },

    async get(ctx: WorkspaceContext, id: string): Promise<KnowledgeBase> {
      return presentBase(await requireBase(ctx, id));
    },

    async update(ctx: WorkspaceContext, id: string, body: KnowledgeBaseUpdate): Promise<KnowledgeBase> {
      const base = await requireBase(ctx, id);
      const now = clock.now();
      const tsConfig = body.language !== undefined ? tsConfigFor(body.language) : base.ts_config;
      await db.transaction().execute(async (tx) => {
        await repo.updateBase(tx, ctx.workspaceId, id, {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.language !== undefined ? { language: body.language, ts_config: tsConfig } : {}),
          updated_at: now,
        });
        if (tsConfig !== base.ts_config) {
          await repo.reindexBase(tx, id, tsConfig);
          await repo.bumpVersion(tx, id, now);
        }
      });
      return presentBase(await requireBase(ctx, id));
    },

    async remove(ctx: WorkspaceContext, id: string): Promise<void> {
      await db.transaction().execute(async (tx) => {
        if (!(await repo.deleteBase(tx, ctx.workspaceId, id))) throw notFound('knowledge base');
        await deps.detachFromAgents(tx, ctx.workspaceId, id, clock.now());
      });
    },

    async addJsonSource(ctx: WorkspaceContext, baseId: string, body: SourceCreateJson): Promise<KnowledgeSource> {
      const base = await requireBase(ctx, baseId);
      const now = clock.now();
      if (body.type === 'text') {
        if (body.url !== undefined) throw invalidField('url', 'is only for type url');
        if (body.title === undefined) throw invalidField('title', 'is required for type text');
        if (body.text === undefined) throw invalidField('text', 'is required for type text');
        const text = body.text;
        const prepared = await ingest.prepare({ text });
        if (prepared.chunks.length === 0) throw invalidField('text', 'contains no text');
        const chunks = await ingest.embed(prepared.chunks);
        const source = await createSource(ctx, base, { type: 'text', title: body.title, filename: null, format: 'txt', stored: prepared.stored, bytes: Buffer.byteLength(text) }, chunks);
        return presentSource(source);
      }
      if (body.text !== undefined) throw invalidField('text', 'is only for type text');
      if (body.url === undefined) throw invalidField('url', 'is required for type url');
      await assertUrlField('url', body.url, { allowPrivate: deps.config.allowPrivateUrls });
      const url = new URL(body.url).toString();
      const inserted = await repo.insertSource(db, {
        id: newId('src'),
        workspace_id: ctx.workspaceId,
        knowledge_base_id: base.id,
        type: 'url',
        title: body.title ?? url,
        url,
        filename: null,
        format: null,
        status: 'processing',
        error: null,
        content: null,
        chunk_count: 0,
        bytes: 0,
        created_at: now,
      });
      await ingestUrl(ctx, base, { id: inserted.id, url, titleGiven: body.title !== undefined }, now);
      return presentSource(await requireSource(ctx, base.id, inserted.id));
    },

    async addFileSource(ctx: WorkspaceContext, baseId: string, file: UploadedFile): Promise<KnowledgeSource> {
      const base = await requireBase(ctx, baseId);
      const format = formatOfFile(file.filename, file.mimetype);
      if (!format) throw new AppError('unsupported_media_type', `unsupported file type; supported: ${SUPPORTED_FORMATS_TEXT}`);
      const extracted = await ingest.extract(file.bytes, format);
      if (!extracted) throw invalidField('file', `could not be read as ${format}`);
      if (extracted.chunks.length === 0) throw invalidField('file', 'contains no extractable text');
      const title = file.title?.trim() || file.filename || 'Untitled file';
      const chunks = await ingest.embed(extracted.chunks);
      const source = await createSource(ctx, base, { type: 'file', title, filename: file.filename || null, format, stored: extracted.stored, bytes: file.bytes.length }, chunks);
      return presentSource(source);
    },

    async listSources(ctx: WorkspaceContext, baseId: string, page: PageRequest): Promise<Page<KnowledgeSource>> {
      await requireBase(ctx, baseId);
      return toPage(await repo.listSources(db, ctx.workspaceId, baseId, page), page, (r) => r.id, presentSource);
    },

    async getSource(ctx: WorkspaceContext, baseId: string, id: string): Promise<KnowledgeSource> {
      return presentSource(await requireSource(ctx, baseId, id));
    },

    async deleteSource(ctx: WorkspaceContext, baseId: string, id: string): Promise<void> {
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        if (!(await repo.deleteSource(tx, ctx.workspaceId, baseId, id))) throw notFound('knowledge source');
        await repo.bumpVersion(tx, baseId, now);
      });
    },

    async refreshSource(ctx: WorkspaceContext, baseId: string, id: string): Promise<KnowledgeSource> {
      const base = await requireBase(ctx, baseId);
      const current = await requireSource(ctx, baseId, id, true);
      const now = clock.now();
      const generation = await db.transaction().execute((tx) => repo.claimSource(tx, ctx.workspaceId, baseId, id, now, new Date(now.getTime() - STALE_PROCESSING_MS)));
      if (!generation) throw invalidState('the source is being processed; retry when its status is ready or failed');
      if (current.type === 'url' && current.url) {
        await ingestUrl(ctx, base, { id, url: current.url, titleGiven: true }, generation);
      } else {
        try {
          const { chunks } = await ingest.prepare({ stored: current.content ?? '' });
          if (chunks.length === 0) throw new IngestError('the document contains no text');
          await ingest.write(ownerOf(ctx, base, id), generation, await ingest.embed(chunks), { bytes: Number(current.bytes), format: (current.format as Format | null) ?? null });
        } catch (error) {
          await recordFailure(id, error, generation);
          if (!(error instanceof IngestError)) throw error;
        }
      }
      return presentSource(await requireSource(ctx, baseId, id));
    },

    async listChunks(ctx: WorkspaceContext, baseId: string, sourceId: string, page: PageRequest): Promise<Page<KnowledgeChunk>> {
      await requireSource(ctx, baseId, sourceId);
      if (page.after !== undefined && !/^\d+$/.test(page.after)) throw invalidField('query.cursor', 'is not a cursor returned by this list');
      return toPage(await repo.listChunks(db, ctx.workspaceId, sourceId, page), page, (r) => String(r.position), (r) => r);
    },

    async query(ctx: WorkspaceContext, baseId: string, query: string, topK: number): Promise<{ results: SearchResult[] }> {
      await requireBase(ctx, baseId);
      return { results: await deps.search.search(ctx.workspaceId, [baseId], query, topK) };
    },
  };
}

export type KnowledgeBaseService = ReturnType<typeof createKnowledgeBaseService>;
