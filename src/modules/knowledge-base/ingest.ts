import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import { type CpuRunner, CpuTaskTimeoutError, cpuTask } from '../../platform/cpu-pool.ts';
import type { Database } from '../../platform/db/schema.ts';
import { AppError } from '../../platform/errors.ts';
import { type OutboundClient, UrlRefusedError } from '../../platform/outbound/ssrf-guard.ts';
import type { EmbeddingsProvider } from '../../ports/embeddings.ts';
import { type Format, formatOfResponse, SUPPORTED_FORMATS_TEXT } from './formats.ts';
import type * as worker from './ingest-worker.ts';
import { CHUNK_BATCH, type ChunkOwner, type KnowledgeBaseRepo, type NewChunk } from './repo.ts';

// From a document to searchable chunks without stalling the process: extraction and chunking in
// the app's worker threads, embeddings over the network, then the chunks written as a hidden
// generation in short transactions (CHUNK_BATCH rows each, the event loop served between them)
// and published in one more (see repo.ts). No transaction is open across anything but the database.

export const MAX_FILE_BYTES = 20 * 1024 * 1024;
const URL_TIMEOUT_MS = 15_000;

const workerModule = new URL('./ingest-worker.ts', import.meta.url);
const prepareTask = cpuTask<typeof worker.prepareText>(workerModule, 'prepareText');
const extractTask = cpuTask<typeof worker.extractDocument>(workerModule, 'extractDocument');

/** An ingestion step that failed for a reason worth showing on the source (status failed, error). */
export class IngestError extends Error {}

/** A document's chunks, its text as stored on the source (stored-content.ts), an HTML page's title. */
export interface ExtractedText extends worker.PreparedText {
  title?: string;
}

export interface IngestionDeps {
  db: Database;
  clock: Clock;
  logger: FastifyBaseLogger;
  outbound: OutboundClient;
  embeddings?: EmbeddingsProvider;
  repo: KnowledgeBaseRepo;
  cpu: CpuRunner;
}

/** What to record on a source whose failed ingestion leaves it `failed`. */
export function failureMessage(error: unknown): string {
  if (error instanceof IngestError) return error.message;
  if (error instanceof AppError && error.code === 'service_unavailable') return 'the server was busy; refresh the source to try again';
  return 'processing the source failed';
}

/** A document at a URL, fetched through the SSRF guard, in a supported format; IngestError says why not. */
async function fetchDocument(outbound: OutboundClient, url: string): Promise<{ body: Buffer; format: Format; contentType?: string }> {
  let response: Awaited<ReturnType<OutboundClient['request']>>;
  try {
    response = await outbound.request(url, { timeoutMs: URL_TIMEOUT_MS, maxBytes: MAX_FILE_BYTES + 1, headers: { accept: 'text/html, text/plain, text/markdown, application/pdf, text/csv, */*;q=0.5' } });
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
  return { body: response.body, format, contentType };
}

export function createIngestion(deps: IngestionDeps) {
  const { db, clock, repo, embeddings, logger, cpu } = deps;
  // One chunk batch in the database's queue at a time, however many ingestions run: PGlite runs
  // queued statements back to back without returning to the event loop, so several ingestions'
  // batches would add up to one long stall. Each batch ends with a turn of the event loop.
  let lane: Promise<unknown> = Promise.resolve();
  const inLane = <T>(work: () => Promise<T>): Promise<T> => {
    const run = lane.then(work);
    lane = run.then(nextTurn, nextTurn);
    return run;
  };

  /** Chunks and stored text (and an HTML page's title) of a document; undefined when it cannot be read as `format`. */
  async function extract(bytes: Buffer, format: Format, contentType?: string): Promise<ExtractedText | undefined> {
    try {
      const result = await cpu.run(extractTask, { bytes, format, contentType });
      return result.readable ? { chunks: result.chunks, stored: result.stored, title: result.title } : undefined;
    } catch (error) {
      // A document that keeps a thread busy past the task limit is treated as unreadable.
      if (error instanceof CpuTaskTimeoutError) return undefined;
      throw error;
    }
  }

  return {
    extract,

    /** Chunks and stored form of plain text, or chunks of a source's stored text. */
    prepare: (input: { text: string } | { stored: string }): Promise<worker.PreparedText> => cpu.run(prepareTask, input),

    /** Embeds the chunks, outside any transaction; without vectors when the provider fails (full-text still works). */
    async embed(pieces: string[]): Promise<NewChunk[]> {
      let vectors: number[][] | undefined;
      if (embeddings) {
        try {
          vectors = await embeddings.embed(pieces);
        } catch (err) {
          logger.warn({ err }, 'embedding the chunks failed; the source is indexed for full-text search only');
        }
      }
      return pieces.map((piece, i) => ({ text: piece, embedding: vectors?.[i] ?? null }));
    },

    /**
     * Writes `chunks` as generation `generation` of the source, then publishes them (the source
     * becomes ready, its older chunks go). False when another ingestion took the source over.
     */
    async write(owner: ChunkOwner, generation: Date, chunks: NewChunk[], update: { stored?: string; bytes: number; format: Format | null; title?: string }): Promise<boolean> {
      for (let i = 0; i < chunks.length; i += CHUNK_BATCH) {
        await inLane(() => db.transaction().execute((tx) => repo.insertChunkBatch(tx, owner, chunks.slice(i, i + CHUNK_BATCH), i, generation)));
      }
      const published = await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const done = await repo.publishChunks(tx, { id: owner.id, generation, chunkCount: chunks.length }, update, now);
        if (done) await repo.bumpVersion(tx, owner.baseId, now);
        return done;
      });
      if (published) await inLane(() => repo.refreshChunkStatistics(db));
      return published;
    },

    /** Fetches a URL through the SSRF guard and extracts its text; IngestError says why not. */
    async fetchUrl(url: string): Promise<ExtractedText & { bytes: number; format: Format }> {
      const { body, format, contentType } = await fetchDocument(deps.outbound, url);
      const extracted = await extract(body, format, contentType);
      if (!extracted) throw new IngestError(`the document at the URL could not be read as ${format}`);
      return { ...extracted, bytes: body.length, format };
    },
  };
}

export type Ingestion = ReturnType<typeof createIngestion>;
