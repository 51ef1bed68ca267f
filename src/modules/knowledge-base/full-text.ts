import { sql } from 'kysely';
import type { Database } from '../../platform/db/schema.ts';
import { VISIBLE_CHUNK } from './repo.ts';

// The full-text half of knowledge search. The query's lexemes (stemmed, stop words dropped, by
// the base's language; read with the bases in the search's first statement) are OR-ed; a chunk
// scores Σ idf(lexeme) · tf/(tf + k) over the lexemes it holds, divided by Σ idf: a BM25-like
// weighted coverage in 0..1 where rare words count most (tf is read as ts_rank_cd of the lone
// lexeme). Lexemes in more than half of a large base's chunks are left out (kept when nothing
// else is left), so frequent domain words neither drown the ranking nor select every chunk.
//
// Work is bounded whatever the words: only a capped candidate set is ranked, chosen through the
// GIN index in the ranking statement itself, by tiers (see candidateTiers). Document
// frequencies are counted once per content version of the bases and cached.

/** ts_rank_cd of one lexeme is about 0.1 per occurrence: tf/(tf + 0.12) saturates like BM25 with k1 ≈ 1.2. */
const TF_SATURATION = 0.12;
/** In bases of at least COMMON_MIN_CHUNKS chunks, a lexeme in more than COMMON_SHARE of them does not select candidates. */
const COMMON_MIN_CHUNKS = 20;
const COMMON_SHARE = 0.5;
const MAX_CACHED_LEXEMES = 50_000;
const MAX_CACHED_SETS = 200;
/** Lexemes whose pairs form the "at least two words" tier: 6 give 15 pairs. */
const MAX_PAIRED = 6;
/**
 * The first MAX_QUERY_TERMS distinct words of the query are used (a question has a handful; a
 * 2,000-character query had 60 and took 0.4 s of PGlite).
 */
export const MAX_QUERY_TERMS = 24;
/** Chunks ranked per search at most (each costs one ts_rank_cd per query word). */
export const MAX_RANKED_CHUNKS = 400;

export interface TextBase {
  id: string;
  content_version: number;
  lexemes: string[];
}

export interface TextHit {
  id: string;
  source_id: string;
  text: string;
  score: number;
}

/** A lexeme as a tsquery of exactly that lexeme (re-parsing it would split `t-mobil` into parts the chunk may not hold). */
export function lexemeQuery(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

interface Term {
  lexeme: string;
  query: string;
  df: number;
}

/**
 * Which chunks to rank, as GIN lookups in priority order, each with a row limit; the statement
 * keeps the first `cap` distinct chunks by tier. (1) Every chunk of the rarest words, rarer
 * first, while their document frequencies fit in `cap`: a rare word's chunks are never cut.
 * (2) For the words left out (frequent ones): chunks holding all of them, then chunks holding
 * any two of the rarest MAX_PAIRED, since coverage ranks those first. (3) When not even the
 * rarest word fits: some of its chunks, so a query that matches always has candidates.
 */
export function candidateTiers(terms: Term[], cap: number): Array<{ query: string; limit: number }> {
  const byRarity = [...terms].sort((a, b) => a.df - b.df || (a.lexeme < b.lexeme ? -1 : 1));
  const tiers: Array<{ query: string; limit: number }> = [];
  let budget = cap;
  let whole = 0;
  while (whole < byRarity.length && byRarity[whole].df <= budget) {
    // Limited by the budget, not the count: a count stops at half the base (see countMissing).
    tiers.push({ query: byRarity[whole].query, limit: budget });
    budget -= byRarity[whole].df;
    whole++;
  }
  const rest = byRarity.slice(whole);
  if (rest.length > 1 && budget > 0) {
    tiers.push({ query: rest.map((t) => t.query).join(' & '), limit: budget });
    const paired = rest.slice(0, MAX_PAIRED);
    if (paired.length > 2) {
      const pairs = paired.flatMap((a, i) => paired.slice(i + 1).map((b) => `(${a.query} & ${b.query})`));
      tiers.push({ query: pairs.join(' | '), limit: budget });
    }
  }
  if (whole === 0 && rest.length > 0) tiers.push({ query: rest[0].query, limit: cap });
  return tiers;
}

export function createFullText(db: Database, options: { maxRankedChunks: number }) {
  /** Document frequencies of the lexemes of a set of bases, valid while their content versions hold. */
  const frequencies = new Map<string, { versions: string; total: number; df: Map<string, number> }>();

  function frequencyEntry(key: string, versions: string) {
    let entry = frequencies.get(key);
    if (!entry || entry.versions !== versions || entry.df.size > MAX_CACHED_LEXEMES) {
      entry = { versions, total: -1, df: new Map() };
      frequencies.set(key, entry);
      while (frequencies.size > MAX_CACHED_SETS) frequencies.delete(frequencies.keys().next().value as string);
    }
    return entry;
  }

  /**
   * Counts the lexemes not cached yet (and the bases' chunks, once). Each count is its own
   * subquery on a constant tsquery, so the planner sees the word (the GIN index for a rare one);
   * counting stops past half the bases: beyond that a lexeme is "common" and its exact count unused.
   */
  async function countMissing(workspaceId: string, baseIds: string[], cache: ReturnType<typeof frequencyEntry>, lexemes: string[]) {
    const missing = lexemes.filter((l) => !cache.df.has(l));
    if (missing.length === 0 && cache.total >= 0) return;
    const inBases = sql`c.workspace_id = ${workspaceId} and c.knowledge_base_id in (${sql.join(baseIds)})`;
    // The published chunk counts of the sources (no scan of the chunks).
    const totalQuery = sql`(select coalesce(sum(s.chunk_count), 0)::int from knowledge_sources s where s.workspace_id = ${workspaceId} and s.knowledge_base_id in (${sql.join(baseIds)}))`;
    if (cache.total < 0) cache.total = Number((await sql<{ n: number }>`select ${totalQuery} as n`.execute(db)).rows[0]?.n ?? 0);
    if (missing.length === 0) return;
    const countLimit = Math.max(COMMON_MIN_CHUNKS, Math.floor(cache.total * COMMON_SHARE) + 1);
    const counts = sql.join(
      missing.map((lexeme, i) => sql`(select count(*)::int from (select 1 from knowledge_chunks c where ${inBases} and c.tsv @@ ${lexemeQuery(lexeme)}::tsquery limit ${countLimit}) m) as ${sql.ref(`d${i}`)}`),
    );
    const { rows } = await sql<Record<string, number>>`select ${counts}`.execute(db);
    for (const [i, lexeme] of missing.entries()) cache.df.set(lexeme, Number(rows[0]?.[`d${i}`] ?? 0));
  }

  return {
    /** Up to `limit` chunks of `bases` (one text search configuration) by weighted coverage of the query's lexemes. */
    async search(workspaceId: string, bases: TextBase[], limit: number): Promise<TextHit[]> {
      const lexemes = bases[0]?.lexemes ?? [];
      if (lexemes.length === 0) return [];
      const baseIds = bases.map((b) => b.id);
      const inBases = sql`c.workspace_id = ${workspaceId} and c.knowledge_base_id in (${sql.join(baseIds)})`;
      const cache = frequencyEntry(
        [...baseIds].sort().join(','),
        bases
          .map((b) => `${b.id}:${b.content_version}`)
          .sort()
          .join(','),
      );
      await countMissing(workspaceId, baseIds, cache, lexemes);
      const total = cache.total;
      const present: Term[] = lexemes.map((lexeme) => ({ lexeme, query: lexemeQuery(lexeme), df: cache.df.get(lexeme) ?? 0 })).filter((t) => t.df > 0);
      if (present.length === 0) return [];
      const informative = present.filter((t) => total < COMMON_MIN_CHUNKS || t.df <= total * COMMON_SHARE);
      const used = informative.length > 0 ? informative : present;
      const weights = used.map((t) => Math.log(1 + (total - t.df + 0.5) / (t.df + 0.5)));
      const weightSum = weights.reduce((a, b) => a + b, 0);
      const cap = options.maxRankedChunks;
      const tiers = candidateTiers(used, cap);

      // One statement: candidates through the GIN index (a union of bounded lookups, first `cap`
      // by tier), each rank computed once (OFFSET 0 keeps PostgreSQL from inlining the inner
      // query), the text read for the winners only.
      const lookups = sql.join(
        tiers.map((tier, i) => sql`(select c.id, ${i}::int as tier from knowledge_chunks c where ${inBases} and c.tsv @@ ${tier.query}::tsquery limit ${tier.limit})`),
        sql` union all `,
      );
      const ranks = sql.join(used.map((t, i) => sql`ts_rank_cd(c.tsv, ${t.query}::tsquery) as ${sql.ref(`r${i}`)}`));
      const score = sql.join(
        used.map((_, i) => sql`${weights[i]}::float8 * (${sql.ref(`r${i}`)} / (${sql.ref(`r${i}`)} + ${TF_SATURATION}))`),
        sql` + `,
      );
      const { rows } = await sql<TextHit>`
        with candidates as (
          select t.id from (${lookups}) t group by t.id order by min(t.tier), t.id limit ${cap}
        ), ranked as (
          select r.id, (${score}) / ${weightSum}::float8 as score
          from (
            select c.id, ${ranks}
            from knowledge_chunks c
            where c.id in (select id from candidates) and ${VISIBLE_CHUNK}
            offset 0
          ) r
          order by score desc, r.id asc
          limit ${limit}
        )
        select k.id, k.source_id, k.text, ranked.score
        from ranked join knowledge_chunks k on k.id = ranked.id
        order by ranked.score desc, ranked.id asc`.execute(db);
      return rows.map((r) => ({ ...r, score: Number(r.score) }));
    },
  };
}
