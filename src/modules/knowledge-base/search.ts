import { sql } from 'kysely';
import type { Database } from '../../platform/db/schema.ts';
import type { EmbeddingsProvider } from '../../ports/embeddings.ts';
import { createFullText, MAX_QUERY_TERMS, MAX_RANKED_CHUNKS, type TextHit } from './full-text.ts';
import { type BaseVectors, createVectorCache, nearestInMatrix, normalized, rowDot } from './vectors.ts';

export { MAX_QUERY_TERMS, MAX_RANKED_CHUNKS } from './full-text.ts';
export { nearestInMatrix } from './vectors.ts';

// Retrieval over knowledge-base chunks, shared by POST /knowledge-base/{id}/query and the
// dialogue engine. Full-text (full-text.ts): the query's stemmed, stop-word-free lexemes OR-ed
// over a GIN-indexed tsvector, an idf-weighted coverage over a bounded candidate set. With an
// embeddings provider, cosine similarity is blended in (vectors.ts): over the full-text
// candidates plus the nearest chunks of each base, scanned in memory from a cache keyed by the
// base's content_version, read with the bases on every search (so a source added or deleted is
// in or out of the next result, on every instance).

export interface SearchHit {
  source_id: string;
  chunk_id: string;
  text: string;
  score: number;
}

export interface KnowledgeSearch {
  search(workspaceId: string, knowledgeBaseIds: string[], query: string, topK: number): Promise<SearchHit[]>;
}

export interface KnowledgeSearchDeps {
  db: Database;
  embeddings?: EmbeddingsProvider;
  /** Told when the embeddings provider fails (search then ranks by full text alone). */
  onEmbeddingError?: (error: unknown) => void;
  /**
   * Memory for cached vectors (default 128 MiB, shared by all bases, least recently used evicted).
   * A base whose vectors alone exceed it is not cached: only its full-text candidates get a cosine.
   */
  vectorCacheBytes?: number;
  /** Chunks the full-text part ranks per search at most (default MAX_RANKED_CHUNKS). */
  maxRankedChunks?: number;
}

/** Hybrid score = FULL_TEXT_WEIGHT · weighted coverage + SEMANTIC_WEIGHT · max(0, cosine); both parts lie in 0..1. */
const FULL_TEXT_WEIGHT = 0.5;
const SEMANTIC_WEIGHT = 0.5;
const MAX_BASES = 50;
const MAX_CACHED_BASES = 200;
const MAX_QUERY_CHARS = 2000;

/** The ids among `ids` that are not knowledge bases of the workspace (for callers validating references, such as agents). */
export async function missingKnowledgeBaseIds(db: Database, workspaceId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const found = await db.selectFrom('knowledge_bases').select('id').where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
  const present = new Set(found.map((r) => r.id));
  return ids.filter((id) => !present.has(id));
}

interface Scored {
  fullText: number;
  semantic: number;
  source_id?: string;
  text?: string;
}

export function createKnowledgeSearch(deps: KnowledgeSearchDeps): KnowledgeSearch {
  const { db, embeddings } = deps;
  const vectors = createVectorCache(db, { maxBytes: deps.vectorCacheBytes ?? 128 * 1024 * 1024, maxBases: MAX_CACHED_BASES });
  const fullText = createFullText(db, { maxRankedChunks: deps.maxRankedChunks ?? MAX_RANKED_CHUNKS });

  async function queryVector(query: string): Promise<Float32Array | undefined> {
    if (!embeddings) return undefined;
    try {
      const [vector] = await embeddings.embed([query]);
      return vector ? normalized(vector) : undefined;
    } catch (error) {
      deps.onEmbeddingError?.(error);
      return undefined;
    }
  }

  /** Each base's nearest chunks to the query (the in-memory scan; needs no full-text result, so it runs beside it). */
  async function nearestChunks(bases: Array<{ id: string; content_version: number }>, vector: Float32Array, candidateLimit: number) {
    const model = embeddings?.model ?? '';
    const entries: BaseVectors[] = [];
    const uncached: string[] = [];
    const nearest: Array<{ id: string; score: number }> = [];
    for (const base of bases) {
      const entry = await vectors.get(base.id, base.content_version, model);
      if (!entry) {
        uncached.push(base.id);
        continue;
      }
      entries.push(entry);
      for (const { row, score } of nearestInMatrix(entry.matrix, entry.dims, vector, candidateLimit)) nearest.push({ id: entry.ids[row], score });
    }
    nearest.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
    return { vector, entries, uncached, nearest: nearest.slice(0, candidateLimit) };
  }

  /** Cosine similarity of the full-text candidates and the nearest chunks, into `scored`. */
  async function blendSemantic(semantic: Awaited<ReturnType<typeof nearestChunks>>, scored: Map<string, Scored>) {
    const { vector, entries, uncached, nearest } = semantic;
    const similarities = new Map<string, number>();
    const candidates = [...scored.keys()];
    for (const entry of entries) {
      if (entry.dims !== vector.length) continue;
      for (const id of candidates) {
        const row = entry.rows.get(id);
        if (row !== undefined) similarities.set(id, rowDot(entry.matrix, entry.dims, row, vector));
      }
    }
    // Bases too large to cache: cosine for their full-text candidates only.
    const missing = candidates.filter((id) => !similarities.has(id));
    if (uncached.length > 0 && missing.length > 0) {
      const model = embeddings?.model ?? '';
      const rows = await db.selectFrom('knowledge_chunks').select(['id', 'embedding', 'embedding_model']).where('id', 'in', missing).execute();
      for (const row of rows) {
        if (row.embedding && row.embedding_model === model && row.embedding.length === vector.length) similarities.set(row.id, rowDot(normalized(row.embedding), vector.length, 0, vector));
      }
    }
    for (const { id, score } of nearest) {
      similarities.set(id, score);
      if (!scored.has(id)) scored.set(id, { fullText: 0, semantic: 0 });
    }
    for (const [id, entry] of scored) entry.semantic = Math.max(0, similarities.get(id) ?? 0);
  }

  return {
    async search(workspaceId, knowledgeBaseIds, rawQuery, topK) {
      const ids = [...new Set(knowledgeBaseIds)].slice(0, MAX_BASES);
      const k = Math.max(1, Math.min(Math.trunc(topK) || 1, 100));
      const query = rawQuery.slice(0, MAX_QUERY_CHARS);
      if (ids.length === 0 || query.trim() === '') return [];
      // The query's embedding (a network call) is fetched while the database does its part.
      const vectorPending = queryVector(query);
      // The bases, their content versions (the caches' keys) and the query's lexemes in each one's language, in one statement.
      const { rows: bases } = await sql<{ id: string; ts_config: string; content_version: number; lexemes: string[] }>`
        select kb.id, kb.ts_config, kb.content_version,
          array(select w.lexeme from unnest(to_tsvector(kb.ts_config::regconfig, ${query})) as w(lexeme, positions, weights)
            order by w.positions[1], w.lexeme limit ${MAX_QUERY_TERMS}) as lexemes
        from knowledge_bases kb
        where kb.workspace_id = ${workspaceId} and kb.id in (${sql.join(ids)})`.execute(db);
      if (bases.length === 0) return [];

      const candidateLimit = Math.max(50, k * 5);
      // The vector scan starts when the query's embedding arrives, while the full-text statements run.
      const semanticPending = vectorPending.then((vector) => (vector ? nearestChunks(bases, vector, candidateLimit) : undefined));
      semanticPending.catch(() => undefined); // awaited below; this only keeps a failure meanwhile from being unhandled
      const byConfig = new Map<string, typeof bases>();
      for (const base of bases) byConfig.set(base.ts_config, [...(byConfig.get(base.ts_config) ?? []), base]);
      const textHits: TextHit[] = [];
      for (const group of byConfig.values()) textHits.push(...(await fullText.search(workspaceId, group, candidateLimit)));
      const scored = new Map<string, Scored>();
      for (const hit of textHits) scored.set(hit.id, { fullText: hit.score, semantic: 0, source_id: hit.source_id, text: hit.text });

      const semantic = await semanticPending;
      if (semantic) await blendSemantic(semantic, scored);

      const ranked = [...scored]
        .map(([id, s]) => ({ id, s, score: semantic ? FULL_TEXT_WEIGHT * s.fullText + SEMANTIC_WEIGHT * s.semantic : s.fullText }))
        .filter((r) => r.score > 0)
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(0, k);
      if (ranked.length === 0) return [];

      // Semantic-only winners have no text yet: read them (and only them) back.
      const missing = ranked.filter((r) => r.s.text === undefined).map((r) => r.id);
      const rows = missing.length === 0 ? [] : await db.selectFrom('knowledge_chunks').select(['id', 'source_id', 'text']).where('workspace_id', '=', workspaceId).where('id', 'in', missing).execute();
      const read = new Map(rows.map((r) => [r.id, r]));
      return ranked.flatMap((r) => {
        const row = r.s.text !== undefined && r.s.source_id !== undefined ? { source_id: r.s.source_id, text: r.s.text } : read.get(r.id);
        return row ? [{ source_id: row.source_id, chunk_id: r.id, text: row.text, score: Math.round(r.score * 1e6) / 1e6 }] : [];
      });
    },
  };
}
