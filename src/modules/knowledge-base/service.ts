import type { FastifyBaseLogger } from 'fastify';
import type { Selectable } from 'kysely';
import type { WorkspaceContext } from '../../platform/auth/access.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { AppError, invalidField, invalidState, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { assertUrlField, type OutboundClient, UrlRefusedError } from '../../platform/outbound/ssrf-guard.ts';
import { type Page, type PageRequest, toPage } from '../../platform/pagination.ts';
import type { EmbeddingsProvider } from '../../providers/embeddings/port.ts';
import { chunkText } from './chunking.ts';
import { extractPlainText, type Format, formatOfFile, formatOfResponse, SUPPORTED_FORMATS_TEXT } from './extract.ts';
import { tsConfigFor } from './language.ts';
import type { KnowledgeBaseRepo, KnowledgeBaseRow, NewChunk } from './repo.ts';
import type { KnowledgeBase, KnowledgeBaseCreate, KnowledgeBaseUpdate, KnowledgeChunk, KnowledgeSource, SearchResult, SourceCreateJson } from './schemas.ts';
import type { KnowledgeSearch } from './search.ts';
import type { KnowledgeSourcesTable } from './tables.ts';

export const MAX_FILE_BYTES = 20 * 1024 * 1024;
const URL_TIMEOUT_MS = 15_000;
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

/** An ingestion step that failed for a reason worth showing on the source (status failed, error). */
class IngestError extends Error {}

export interface UploadedFile {
  filename: string;
  mimetype: string;
  bytes: Buffer;
  title?: string;
}

export function createKnowledgeBaseService(deps: KnowledgeBaseServiceDeps) {
  const { db, clock, repo, embeddings, logger } = deps;

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

  /** Chunks and embeds text, outside any transaction (the embeddings call is network I/O). */
  async function prepareChunks(text: string): Promise<NewChunk[]> {
    const pieces = chunkText(text);
    if (pieces.length === 0) throw new IngestError('the document contains no text');
    let vectors: number[][] | undefined;
    if (embeddings) {
      try {
        vectors = await embeddings.embed(pieces);
      } catch (err) {
        // Full-text search still works; a refresh embeds again.
        logger.warn({ err }, 'embedding the chunks failed; the source is indexed for full-text search only');
      }
    }
    return pieces.map((piece, i) => ({ text: piece, embedding: vectors?.[i] ?? null }));
  }

  async function commitChunks(
    ctx: WorkspaceContext,
    base: { id: string; ts_config: string },
    sourceId: string,
    chunks: NewChunk[],
    update: { content: string; bytes: number; format: Format | null; title?: string },
  ) {
    const now = clock.now();
    await db.transaction().execute(async (tx) => {
      await repo.replaceChunks(tx, { id: sourceId, workspaceId: ctx.workspaceId, baseId: base.id, tsConfig: base.ts_config, embeddingModel: embeddings?.model ?? null }, chunks, update, now);
      await repo.bumpVersion(tx, base.id, now);
    });
  }

  async function fetchUrl(url: string): Promise<{ text: string; bytes: number; format: Format; title?: string }> {
    let response: Awaited<ReturnType<OutboundClient['request']>>;
    try {
      response = await deps.outbound.request(url, { timeoutMs: URL_TIMEOUT_MS, maxBytes: MAX_FILE_BYTES + 1, headers: { accept: 'text/html, text/plain, text/markdown, application/pdf, text/csv, */*;q=0.5' } });
    } catch (error) {
      if (error instanceof UrlRefusedError) throw new IngestError(`the URL was refused: ${error.message}`);
      const name = (error as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError') throw new IngestError(`fetching the URL timed out after ${URL_TIMEOUT_MS / 1000} s`);
      throw new IngestError('fetching the URL failed (connection error)');
    }
    if (response.status < 200 || response.status >= 300) throw new IngestError(`fetching the URL returned HTTP ${response.status}`);
    if (response.truncated) throw new IngestError('the document at the URL is larger than 20 MiB');
    const contentType = response.headers['content-type'];
    const format = formatOfResponse(contentType, response.url);
    if (!format) throw new IngestError(`unsupported content type ${contentType ?? '(none)'}; supported: ${SUPPORTED_FORMATS_TEXT}`);
    let text: string;
    try {
      text = await extractPlainText(response.body, format, 'url', contentType);
    } catch {
      throw new IngestError(`the document at the URL could not be read as ${format}`);
    }
    const title = format === 'html' ? /<title[^>]*>([^<]{1,300})<\/title>/i.exec(response.body.toString('utf8'))?.[1]?.trim() : undefined;
    return { text, bytes: response.body.length, format, title };
  }

  /** Fetches and indexes a URL source that is already marked processing; records failure on the row. */
  async function ingestUrl(ctx: WorkspaceContext, base: { id: string; ts_config: string }, source: { id: string; url: string; title: string | null; titleGiven: boolean }) {
    try {
      const fetched = await fetchUrl(source.url);
      const chunks = await prepareChunks(fetched.text);
      await commitChunks(ctx, base, source.id, chunks, {
        content: fetched.text,
        bytes: fetched.bytes,
        format: fetched.format,
        title: source.titleGiven ? undefined : fetched.title,
      });
    } catch (error) {
      const message = error instanceof IngestError ? error.message : 'processing the source failed';
      if (!(error instanceof IngestError)) logger.error({ err: error }, 'knowledge source ingestion failed');
      await repo.markFailed(db, source.id, message, clock.now());
    }
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
        await repo.detachFromAgents(tx, ctx.workspaceId, id, clock.now());
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
        let chunks: NewChunk[];
        try {
          chunks = await prepareChunks(text);
        } catch (error) {
          if (error instanceof IngestError) throw invalidField('text', 'contains no text');
          throw error;
        }
        const source = await insertReadySource(ctx, base, { type: 'text', title: body.title, url: null, filename: null, format: 'txt', text, bytes: Buffer.byteLength(text) }, chunks, now);
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
      await ingestUrl(ctx, base, { id: inserted.id, url, title: body.title ?? null, titleGiven: body.title !== undefined });
      return presentSource(await requireSource(ctx, base.id, inserted.id));
    },

    async addFileSource(ctx: WorkspaceContext, baseId: string, file: UploadedFile): Promise<KnowledgeSource> {
      const base = await requireBase(ctx, baseId);
      const format = formatOfFile(file.filename, file.mimetype);
      if (!format) throw new AppError('unsupported_media_type', `unsupported file type; supported: ${SUPPORTED_FORMATS_TEXT}`);
      const text = await extractPlainText(file.bytes, format, 'file');
      let chunks: NewChunk[];
      try {
        chunks = await prepareChunks(text);
      } catch (error) {
        if (error instanceof IngestError) throw invalidField('file', 'contains no extractable text');
        throw error;
      }
      const title = file.title?.trim() || file.filename || 'Untitled file';
      const source = await insertReadySource(ctx, base, { type: 'file', title, url: null, filename: file.filename || null, format, text, bytes: file.bytes.length }, chunks, clock.now());
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
      const claimed = await repo.claimSource(db, ctx.workspaceId, baseId, id, now, new Date(now.getTime() - STALE_PROCESSING_MS));
      if (!claimed) throw invalidState('the source is being processed; retry when its status is ready or failed');
      if (current.type === 'url' && current.url) {
        await ingestUrl(ctx, base, { id, url: current.url, title: current.title, titleGiven: true });
      } else {
        try {
          const chunks = await prepareChunks(current.content ?? '');
          await commitChunks(ctx, base, id, chunks, { content: current.content ?? '', bytes: Number(current.bytes), format: (current.format as Format | null) ?? null });
        } catch (error) {
          await repo.markFailed(db, id, error instanceof IngestError ? error.message : 'processing the source failed', clock.now());
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

  async function insertReadySource(
    ctx: WorkspaceContext,
    base: { id: string; ts_config: string },
    source: { type: 'text' | 'file'; title: string; url: null; filename: string | null; format: Format; text: string; bytes: number },
    chunks: NewChunk[],
    now: Date,
  ) {
    const id = newId('src');
    await db.transaction().execute(async (tx) => {
      await repo.insertSource(tx, {
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
        content: null,
        chunk_count: 0,
        bytes: source.bytes,
        created_at: now,
      });
      await repo.replaceChunks(tx, { id, workspaceId: ctx.workspaceId, baseId: base.id, tsConfig: base.ts_config, embeddingModel: embeddings?.model ?? null }, chunks, { content: source.text, bytes: source.bytes, format: source.format }, now);
      await repo.bumpVersion(tx, base.id, now);
    });
    return requireSource(ctx, base.id, id);
  }
}

export type KnowledgeBaseService = ReturnType<typeof createKnowledgeBaseService>;
