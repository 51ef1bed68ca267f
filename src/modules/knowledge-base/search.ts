import { sql } from 'kysely';
import type { Database } from '../../platform/db/schema.ts';
import type { EmbeddingsProvider } from '../../providers/embeddings/port.ts';
import { VISIBLE_CHUNK } from './repo.ts';

// Retrieval over knowledge-base chunks, shared by POST /knowledge-base/{id}/query and the
// dialogue engine. Full-text: the query's stemmed, stop-word-free lexemes OR-ed together (so a
// reworded question still matches) over a GIN-indexed tsvector built with the base's language,
// ranked by an idf-weighted sum of per-lexeme ts_rank_cd (see fullText). With an embeddings provider, cosine similarity is blended in: over
// the full-text candidates plus the nearest chunks of each base, scanned in memory from a cache
// keyed by the base's content_version (read on every search, so a deleted source is gone from
// the next result, on every instance).

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
}

/** Hybrid score = FULL_TEXT_WEIGHT · weighted coverage + SEMANTIC_WEIGHT · max(0, cosine); both parts lie in 0..1. */
const FULL_TEXT_WEIGHT = 0.5;
const SEMANTIC_WEIGHT = 0.5;
const MAX_BASES = 50;
const MAX_CACHED_BASES = 200;
/** ts_rank_cd of one lexeme is about 0.1 per occurrence: tf/(tf + 0.12) saturates like BM25 with k1 ≈ 1.2. */
const TF_SATURATION = 0.12;
/** In bases of at least COMMON_MIN_CHUNKS chunks, a lexeme in more than COMMON_SHARE of them does not select candidates. */
const COMMON_MIN_CHUNKS = 20;
const COMMON_SHARE = 0.5;
const MAX_CACHED_LEXEMES = 50_000;
/**
 * Bounds on one search's work, which on PGlite is main-thread CPU: every ranked chunk costs one
 * ts_rank_cd per query word. The first MAX_QUERY_TERMS distinct words of the query are used (a
 * question has a handful; a 2,000-character query had 60 and took 0.4 s). Candidates are the
 * chunks holding the rarest of them, rarer words first, until their document frequencies add up
 * to MAX_RANKED_CHUNKS (always at least the rarest word); the others still count in the score.
 */
export const MAX_QUERY_TERMS = 24;
export const MAX_RANKED_CHUNKS = 1500;
const MAX_QUERY_CHARS = 2000;

interface CachedBase {
  version: number;
  ids: string[];
  vectors: Float32Array[];
  floats: number;
  tooLarge?: boolean;
}

function normalized(vector: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(vector);
  let norm = 0;
  for (const v of out) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < out.length; i++) out[i] /= norm;
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}

/** The ids among `ids` that are not knowledge bases of the workspace (for callers validating references, such as agents). */
export async function missingKnowledgeBaseIds(db: Database, workspaceId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const found = await db.selectFrom('knowledge_bases').select('id').where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
  const present = new Set(found.map((r) => r.id));
  return ids.filter((id) => !present.has(id));
}

export function createKnowledgeSearch(deps: KnowledgeSearchDeps): KnowledgeSearch {
  const { db, embeddings } = deps;
  const maxCachedFloats = Math.floor((deps.vectorCacheBytes ?? 128 * 1024 * 1024) / 4);
  const cache = new Map<string, CachedBase>();
  let cachedFloats = 0;

  /** The base's vectors (normalised), loaded once per content version; undefined when they exceed the cache budget. */
  async function vectorsOf(baseId: string, version: number): Promise<CachedBase | undefined> {
    const hit = cache.get(baseId);
    if (hit && hit.version === version) {
      cache.delete(baseId);
      cache.set(baseId, hit); // most recently used last
      return hit.tooLarge ? undefined : hit;
    }
    if (hit) {
      cachedFloats -= hit.floats;
      cache.delete(baseId);
    }
    const model = embeddings?.model ?? '';
    const size = await db
      .selectFrom('knowledge_chunks as c')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max(sql<number>`cardinality(c.embedding)`).as('dims')])
      .where('c.knowledge_base_id', '=', baseId)
      .where('c.embedding_model', '=', model)
      .where(VISIBLE_CHUNK)
      .executeTakeFirstOrThrow();
    const floats = Number(size.n) * Number(size.dims ?? 0);
    if (floats > maxCachedFloats) {
      cache.set(baseId, { version, ids: [], vectors: [], floats: 0, tooLarge: true });
      return undefined;
    }
    const rows = await db
      .selectFrom('knowledge_chunks as c')
      .select(['c.id', 'c.embedding'])
      .where('c.knowledge_base_id', '=', baseId)
      .where('c.embedding_model', '=', model)
      .where(VISIBLE_CHUNK)
      .execute();
    const entry: CachedBase = { version, ids: [], vectors: [], floats: 0 };
    for (const row of rows) {
      if (!row.embedding) continue;
      entry.ids.push(row.id);
      entry.vectors.push(normalized(row.embedding));
      entry.floats += row.embedding.length;
    }
    cache.set(baseId, entry);
    cachedFloats += entry.floats;
    // Evict the least recently used bases beyond the budget (never the one just loaded).
    for (const [id, old] of cache) {
      if ((cachedFloats <= maxCachedFloats && cache.size <= MAX_CACHED_BASES) || id === baseId) break;
      cachedFloats -= old.floats;
      cache.delete(id);
    }
    return entry;
  }

  /** Document frequencies of the lexemes of a set of bases, valid while their content versions hold. */
  const frequencies = new Map<string, { versions: string; total: number; df: Map<string, number> }>();

  function frequencyEntry(key: string, versions: string) {
    let entry = frequencies.get(key);
    if (!entry || entry.versions !== versions || entry.df.size > MAX_CACHED_LEXEMES) {
      entry = { versions, total: -1, df: new Map() };
      frequencies.set(key, entry);
      while (frequencies.size > MAX_CACHED_BASES) frequencies.delete(frequencies.keys().next().value as string);
    }
    return entry;
  }

  /**
   * Full-text candidates. The query's lexemes (stemmed, stop words dropped, by the base's language)
   * are OR-ed; each matching chunk scores Σ idf(lexeme) · tf/(tf + k) over the lexemes it holds,
   * divided by Σ idf — a BM25-like weighted coverage in 0..1 where rare words count most (tf is
   * read as ts_rank_cd of the lone lexeme). Lexemes found in more than half of a large base's chunks
   * are left out of the match (kept when nothing else is left), so frequent domain words neither
   * drown the ranking nor make every chunk a candidate. Document frequencies are cached per
   * content version, so a repeated word costs one index lookup per change of the base. The work
   * is bounded by MAX_QUERY_TERMS and MAX_RANKED_CHUNKS.
   */
  async function fullText(workspaceId: string, bases: Array<{ id: string; content_version: number }>, tsConfig: string, query: string, limit: number) {
    const baseIds = bases.map((b) => b.id);
    const inBases = sql`c.workspace_id = ${workspaceId} and c.knowledge_base_id in (${sql.join(baseIds)})`;
    const cache = frequencyEntry(
      `${tsConfig}|${[...baseIds].sort().join(',')}`,
      bases.map((b) => `${b.id}:${b.content_version}`).sort().join(','),
    );
    const known = [...cache.df.keys()];
    // Counting stops past half the base: beyond that a lexeme is "common" and its exact count is not needed.
    const { rows: terms } = await sql<{ lexeme: string; query: string; df: number | null; total: number | null }>`
      with total as (
        select case when ${cache.total >= 0} then ${cache.total}::int else (select count(*)::int from knowledge_chunks c where ${inBases}) end as n
      ), words as (
        select w.lexeme from unnest(to_tsvector(${tsConfig}::regconfig, ${query})) as w(lexeme, positions, weights)
        order by w.positions[1], w.lexeme limit ${MAX_QUERY_TERMS}
      )
      select l.lexeme, plainto_tsquery('simple', l.lexeme)::text as query, total.n as total,
        case when l.lexeme = any(${known}::text[]) then null
          else (select count(*)::int from (
            select 1 from knowledge_chunks c where ${inBases} and c.tsv @@ plainto_tsquery('simple', l.lexeme)
            limit greatest(${COMMON_MIN_CHUNKS}::int, floor(total.n * ${COMMON_SHARE}::float8)::int + 1)) m) end as df
      from words l cross join total`.execute(db);
    for (const term of terms) {
      if (term.df !== null) cache.df.set(term.lexeme, Number(term.df));
      if (term.total !== null) cache.total = Number(term.total);
    }
    const total = cache.total;
    const present = terms.map((t) => ({ ...t, df: cache.df.get(t.lexeme) ?? 0 })).filter((t) => t.df > 0 && t.query !== '');
    if (present.length === 0) return [];
    const informative = present.filter((t) => total < COMMON_MIN_CHUNKS || t.df <= total * COMMON_SHARE);
    const used = informative.length > 0 ? informative : present;
    const weights = used.map((t) => Math.log(1 + (total - t.df + 0.5) / (t.df + 0.5)));
    const weightSum = weights.reduce((a, b) => a + b, 0);
    // Candidates: the rarest words' chunks, up to MAX_RANKED_CHUNKS of them (by document frequency).
    const selecting: typeof used = [];
    let covered = 0;
    for (const t of [...used].sort((a, b) => a.df - b.df)) {
      if (selecting.length > 0 && covered + t.df > MAX_RANKED_CHUNKS) break;
      selecting.push(t);
      covered += t.df;
    }
    // The tsqueries are constants of the statement (their text as PostgreSQL printed it). Each
    // rank is computed once, in the inner query (OFFSET 0 keeps PostgreSQL from inlining it).
    const anyTerm = selecting.map((t) => `(${t.query})`).join(' | ');
    const ranks = sql.join(used.map((t, i) => sql`ts_rank_cd(c.tsv, ${t.query}::tsquery) as ${sql.ref(`r${i}`)}`));
    const score = sql.join(
      used.map((_, i) => sql`${weights[i]}::float8 * (${sql.ref(`r${i}`)} / (${sql.ref(`r${i}`)} + ${TF_SATURATION}))`),
      sql` + `,
    );
    const { rows } = await sql<{ id: string; source_id: string; text: string; score: number }>`
      select r.id, r.source_id, r.text, (${score}) / ${weightSum} as score
      from (
        select c.id, c.source_id, c.text, ${ranks}
        from knowledge_chunks c
        where ${inBases} and c.tsv @@ ${anyTerm}::tsquery and ${VISIBLE_CHUNK}
        offset 0
      ) r
      order by score desc, r.id asc
      limit ${limit}`.execute(db);
    return rows.map((r) => ({ ...r, score: Number(r.score) }));
  }

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

  return {
    async search(workspaceId, knowledgeBaseIds, rawQuery, topK) {
      const ids = [...new Set(knowledgeBaseIds)].slice(0, MAX_BASES);
      const k = Math.max(1, Math.min(Math.trunc(topK) || 1, 100));
      const query = rawQuery.slice(0, MAX_QUERY_CHARS);
      if (ids.length === 0 || query.trim() === '') return [];
      // The query's embedding (a network call) is fetched while the database does its part.
      const vectorPending = queryVector(query);
      const bases = await db
        .selectFrom('knowledge_bases')
        .select(['id', 'ts_config', 'content_version'])
        .where('workspace_id', '=', workspaceId)
        .where('id', 'in', ids)
        .execute();
      if (bases.length === 0) return [];

      const candidateLimit = Math.max(50, k * 5);
      const byConfig = new Map<string, typeof bases>();
      for (const base of bases) byConfig.set(base.ts_config, [...(byConfig.get(base.ts_config) ?? []), base]);
      const textHits = (await Promise.all([...byConfig].map(([config, bases]) => fullText(workspaceId, bases, config, query, candidateLimit)))).flat();
      const scored = new Map<string, { fullText: number; semantic: number; source_id?: string; text?: string }>();
      for (const hit of textHits) scored.set(hit.id, { fullText: hit.score, semantic: 0, source_id: hit.source_id, text: hit.text });

      const vector = await vectorPending;
      if (vector) {
        const similarities = new Map<string, number>();
        const nearest: Array<[string, number]> = [];
        const uncached: string[] = [];
        for (const base of bases) {
          const entry = await vectorsOf(base.id, base.content_version);
          if (!entry) {
            uncached.push(base.id);
            continue;
          }
          for (let i = 0; i < entry.ids.length; i++) {
            const similarity = dot(vector, entry.vectors[i]);
            similarities.set(entry.ids[i], similarity);
            nearest.push([entry.ids[i], similarity]);
          }
        }
        // Bases too large to cache: cosine for their full-text candidates only.
        const missing = [...scored.keys()].filter((id) => !similarities.has(id));
        if (uncached.length > 0 && missing.length > 0) {
          const rows = await db.selectFrom('knowledge_chunks').select(['id', 'embedding', 'embedding_model']).where('id', 'in', missing).execute();
          for (const row of rows) {
            if (row.embedding && row.embedding_model === embeddings?.model) similarities.set(row.id, dot(vector, normalized(row.embedding)));
          }
        }
        nearest.sort((a, b) => b[1] - a[1]);
        for (const [id] of nearest.slice(0, candidateLimit)) if (!scored.has(id)) scored.set(id, { fullText: 0, semantic: 0 });
        for (const [id, entry] of scored) entry.semantic = Math.max(0, similarities.get(id) ?? 0);
      }

      const ranked = [...scored]
        .map(([id, s]) => ({ id, s, score: vector ? FULL_TEXT_WEIGHT * s.fullText + SEMANTIC_WEIGHT * s.semantic : s.fullText }))
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
