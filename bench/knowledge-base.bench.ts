// Knowledge-base retrieval benchmark. One knowledge base per database: the three quality fixtures
// ingested through the service (as the API does), then generated documents in the same domain,
// chunked by the product's chunker and bulk-inserted as the product writes them (sources ready,
// tsvector with the base's configuration, embeddings of the fake provider, content_version bumped):
// 2,000 chunks on PGlite; 50,000 on PostgreSQL when BENCH_DATABASE_URL is set (a schema of its
// own, dropped at the end). The words follow a Zipf law, so some are in nearly every chunk and
// others in a handful. 200 queries from a seeded PRNG mix the fixture questions, common words and
// rare words; latency p50/p95/p99 through the search function the API and the dialogue engine use,
// full-text alone and hybrid (query embeddings from a local fake OpenAI-compatible server), each
// on a fresh search instance (first pass: empty word caches) and again (second pass: warm). Also
// the top-3 hit rate of the fixture questions, and the in-memory vector scan alone at growing
// sizes (memory, time per query), which is where that design stops scaling.
//   node --import tsx bench/knowledge-base.bench.ts
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db>  BENCH_QUERIES=200  BENCH_PG_CHUNKS=50000
//   BENCH_CAP=n (candidates ranked, default the product's)  BENCH_BEFORE_ROOT=dir (the old code's search measured beside, query by query)  BENCH_ONLY=pglite|postgres|scan  BENCH_TRACE=1 (time per search statement, first pass of each mode)
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pino from 'pino';
import { chunkText } from '../src/modules/knowledge-base/chunking.ts';
import { createKnowledgeBaseRepo } from '../src/modules/knowledge-base/repo.ts';
import { createKnowledgeSearch, type KnowledgeSearch, nearestInMatrix } from '../src/modules/knowledge-base/search.ts';
import { createAgentsRepo } from '../src/modules/agents/repo.ts';
import { createKnowledgeBaseService } from '../src/modules/knowledge-base/service.ts';
import { FIXTURES, QUESTIONS, squash } from '../src/modules/knowledge-base/test-helpers.ts';
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../src/platform/db/database.ts';
import type { DB, Database } from '../src/platform/db/schema.ts';
import { newId } from '../src/platform/ids.ts';
import { createOutboundClient } from '../src/platform/outbound/ssrf-guard.ts';
import { fakeEmbedding } from '../test/fakes/openai/embeddings.ts';
import { createOpenAiEmbeddings } from '../src/providers/embeddings/openai.ts';
import type { EmbeddingsProvider } from '../src/ports/embeddings.ts';
import { startModuleWorker } from '../src/platform/module-worker.ts';
import { prng } from './prng.ts';
import { document, queryMix } from './support/knowledge-corpus.ts';

const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const PGLITE_CHUNKS = Number(process.env.BENCH_PGLITE_CHUNKS ?? 2000);
const PG_CHUNKS = Number(process.env.BENCH_PG_CHUNKS ?? 50_000);
const ONLY = process.env.BENCH_ONLY;
const TOP_K = 5;
const MODEL = 'fake-embed-1';
const GOALS = { pglite_p95_ms: 20, postgres_p95_ms: 50 };

function percentiles(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  const round = (v: number) => Math.round(v * 1000) / 1000;
  return { p50_ms: round(at(50)), p95_ms: round(at(95)), p99_ms: round(at(99)), max_ms: round(sorted[sorted.length - 1]), mean_ms: round(sorted.reduce((s, v) => s + v, 0) / sorted.length), samples: sorted.length };
}

async function timed<T>(items: T[], fn: (item: T) => Promise<unknown>) {
  const samples: number[] = [];
  for (const item of items) {
    const started = performance.now();
    await fn(item);
    samples.push(performance.now() - started);
  }
  return samples;
}

/** BENCH_BEFORE_ROOT: another checkout of this project (e.g. `git archive <commit> | tar -x -C /tmp/before`), whose search runs beside ours. */
async function beforeSearch(): Promise<((deps: { db: Database; embeddings?: EmbeddingsProvider }) => KnowledgeSearch) | undefined> {
  const root = process.env.BENCH_BEFORE_ROOT;
  if (!root) return undefined;
  const module = (await import(path.resolve(root, 'src/modules/knowledge-base/search.ts'))) as { createKnowledgeSearch: (deps: { db: Database; embeddings?: EmbeddingsProvider }) => KnowledgeSearch };
  return module.createKnowledgeSearch;
}

/** BENCH_TRACE: the search's statements timed (by their first words), through a logging Kysely on the same connection. */
function tracer(handle: DatabaseHandle) {
  if (!process.env.BENCH_TRACE) return undefined;
  const totals = new Map<string, { n: number; ms: number; max: number; sql: string; parameters: readonly unknown[] }>();
  const dialect = handle.pglite ? new PGliteDialect(handle.pglite) : new PostgresDialect({ pool: handle.pool as NonNullable<DatabaseHandle['pool']> });
  const db = new Kysely<DB>({
    dialect,
    log: (event) => {
      const key = event.query.sql.replace(/\s+/g, ' ').trim().slice(0, 70);
      const entry = totals.get(key) ?? { n: 0, ms: 0, max: 0, sql: '', parameters: [] };
      entry.n++;
      entry.ms += event.queryDurationMillis;
      if (event.queryDurationMillis >= entry.max) Object.assign(entry, { max: event.queryDurationMillis, sql: event.query.sql, parameters: event.query.parameters });
      totals.set(key, entry);
    },
  });
  return {
    db,
    async report(label: string) {
      for (const [key, e] of [...totals].sort((a, b) => b[1].ms - a[1].ms)) {
        console.log(`${label} trace: ${e.n} × mean ${(e.ms / e.n).toFixed(2)} ms, max ${e.max.toFixed(1)} ms: ${key}`);
        // BENCH_TRACE=explain: the plan of each kind's slowest statement, run again.
        if (process.env.BENCH_TRACE === 'explain' && e.sql.trim().startsWith('with')) {
          const { rows } = await handle.db.executeQuery<{ 'QUERY PLAN': string }>({ sql: `explain (analyze, buffers) ${e.sql}`, parameters: e.parameters, query: e.sql as never, queryId: { queryId: 'explain' } });
          console.log(rows.map((r) => r['QUERY PLAN']).join('\n'));
        }
      }
      totals.clear();
    },
  };
}

/** The fixtures through the service, as the API ingests them (with the fake provider's embeddings). */
async function ingestFixtures(db: Database, embeddings: EmbeddingsProvider) {
  const now = new Date();
  const workspaceId = newId('ws');
  await db.insertInto('workspaces').values({ id: workspaceId, name: 'bench', created_by: null, created_at: now, updated_at: now }).execute();
  const service = createKnowledgeBaseService({
    db,
    clock: { now: () => new Date() },
    logger: pino({ level: 'silent' }),
    config: { allowPrivateUrls: true },
    outbound: createOutboundClient({ allowPrivate: true }),
    embeddings,
    repo: createKnowledgeBaseRepo(),
    search: createKnowledgeSearch({ db }),
    detachFromAgents: createAgentsRepo().detachKnowledgeBase,
  });
  const ctx = { workspaceId, scope: 'write' as const, actor: { type: 'api_key' as const, id: 'bench', name: 'bench' } };
  const base = await service.create(ctx, { name: 'Bench knowledge base', language: 'en' });
  const types: Record<string, string> = { md: 'text/markdown', html: 'text/html', pdf: 'application/pdf' };
  for (const filename of ['guide.md', 'page.html', 'manual.pdf']) {
    await service.addFileSource(ctx, base.id, { filename, mimetype: types[filename.split('.').pop() ?? ''], bytes: fs.readFileSync(path.join(FIXTURES, filename)) });
  }
  return { workspaceId, baseId: base.id, chunks: (await service.get(ctx, base.id)).chunk_count };
}

/**
 * Generated documents, bulk-inserted the way the service writes them: a ready text source per
 * document, its chunks from chunkText with to_tsvector of the base's configuration and the
 * vector the fake provider returns for the chunk; then the base's content_version bumped.
 */
async function seed(db: Database, workspaceId: string, baseId: string, from: number, target: number, parallel: number) {
  const random = prng(42);
  let chunks = from;
  const ROWS_PER_STATEMENT = 500;
  let sources: Array<Record<string, unknown>> = [];
  let pending: Array<Record<string, unknown>> = [];
  const inFlight = new Set<Promise<void>>();
  const flush = async () => {
    if (pending.length === 0) return;
    const [sourceRows, chunkRows] = [sources, pending];
    [sources, pending] = [[], []];
    // The sources, then their chunks; as repo.insertChunkBatch, GIN's pending list kept small.
    const done: Promise<void> = db
      .transaction()
      .execute(async (tx) => {
        await sql`set local gin_pending_list_limit = 64`.execute(tx);
        await tx.insertInto('knowledge_sources').values(sourceRows as never).execute();
        await tx.insertInto('knowledge_chunks').values(chunkRows as never).execute();
      })
      .finally(() => inFlight.delete(done));
    inFlight.add(done);
    if (inFlight.size >= parallel) await Promise.race(inFlight);
  };
  for (let n = 1; chunks < target; n++) {
    const text = document(random, 6 + Math.floor(random() * 10));
    const pieces = chunkText(text).slice(0, target - chunks);
    const now = new Date();
    const sourceId = newId('src');
    sources.push({
      id: sourceId,
      workspace_id: workspaceId,
      knowledge_base_id: baseId,
      type: 'text',
      title: `Generated ${n}`,
      url: null,
      filename: null,
      format: 'txt',
      status: 'ready',
      error: null,
      content: text,
      chunk_count: pieces.length,
      bytes: Buffer.byteLength(text),
      created_at: now,
      updated_at: now,
    });
    for (const [position, piece] of pieces.entries()) {
      pending.push({
        id: newId('chk'),
        workspace_id: workspaceId,
        knowledge_base_id: baseId,
        source_id: sourceId,
        position,
        text: piece,
        tsv: sql`to_tsvector('english'::regconfig, ${piece})`,
        embedding: fakeEmbedding(piece),
        embedding_model: MODEL,
        created_at: now,
      });
    }
    chunks += pieces.length;
    if (pending.length >= ROWS_PER_STATEMENT) await flush();
  }
  await flush();
  await Promise.all(inFlight);
  await createKnowledgeBaseRepo().bumpVersion(db, baseId, new Date());
  return chunks;
}

async function measureDatabase(label: 'pglite' | 'postgresql', handle: DatabaseHandle, target: number, embeddings: EmbeddingsProvider) {
  const { db } = handle;
  const seedStarted = performance.now();
  const { workspaceId, baseId, chunks: fixtureChunks } = await ingestFixtures(db, embeddings);
  // On PostgreSQL the GIN index is built once after the bulk insert (the same index as the
  // migration's; inserting 50,000 rows into it one small pending list at a time takes minutes).
  if (handle.kind === 'postgres') await sql`drop index knowledge_chunks_tsv_idx`.execute(db);
  const chunks = await seed(db, workspaceId, baseId, fixtureChunks, target, handle.kind === 'postgres' ? 3 : 1);
  if (handle.kind === 'postgres') await sql`create index knowledge_chunks_tsv_idx on knowledge_chunks using gin (tsv)`.execute(db);
  // What the service does after publishing a source (statistics when the table has doubled).
  const analyzeStarted = performance.now();
  await createKnowledgeBaseRepo().refreshChunkStatistics(db);
  const analyzeMs = Math.round(performance.now() - analyzeStarted);
  const seedSeconds = Math.round(performance.now() - seedStarted) / 1000;
  console.log(`${label}: ${chunks} chunks seeded in ${seedSeconds} s`);

  const queries = queryMix(QUERIES);
  const before = await beforeSearch();
  const modes = [];
  for (const mode of ['full_text', 'hybrid'] as const) {
    const trace = tracer(handle);
    const withEmbeddings = mode === 'hybrid' ? embeddings : undefined;
    const search = createKnowledgeSearch({ db: trace?.db ?? db, embeddings: withEmbeddings, ...(process.env.BENCH_CAP ? { maxRankedChunks: Number(process.env.BENCH_CAP) } : {}) });
    const old = before?.({ db, embeddings: withEmbeddings });
    // One query loads the base's vectors (hybrid) before the timed passes; reported apart.
    const loadStarted = performance.now();
    await search.search(workspaceId, [baseId], 'warm up', TOP_K);
    const loadMs = Math.round((performance.now() - loadStarted) * 1000) / 1000;
    await old?.search(workspaceId, [baseId], 'warm up', TOP_K);
    // Each query through the old code too (BENCH_BEFORE_ROOT), alternately first, so both see the same machine.
    const pass = async () => {
      const samples: number[] = [];
      const oldSamples: number[] = [];
      for (const [i, q] of queries.entries()) {
        const timeOne = async (s: typeof search, into: number[]) => {
          const started = performance.now();
          await s.search(workspaceId, [baseId], q.text, TOP_K);
          into.push(performance.now() - started);
        };
        if (old && i % 2 === 0) await timeOne(old, oldSamples);
        await timeOne(search, samples);
        if (old && i % 2 === 1) await timeOne(old, oldSamples);
      }
      return { samples, oldSamples };
    };
    const first = await pass();
    if (trace) await trace.report(`${label} ${mode}`);
    const second = await pass();
    const byKind = Object.fromEntries(['question', 'common', 'rare', 'mixed'].map((kind) => [kind, percentiles(first.samples.filter((_, i) => queries[i].kind === kind))]));
    // Agreement with an exhaustive ranking (every chunk holding a query word ranked): the share of its top 5 also in ours.
    const reference = createKnowledgeSearch({ db, embeddings: withEmbeddings, maxRankedChunks: 1e9 });
    // And the sum of our top-5 scores over the exhaustive one's (1 = as good a top 5, ties aside).
    let agreement = 0;
    let disagreeing = 0;
    const agreementByKind: Record<string, { shares: number[]; scoreRatios: number[] }> = {};
    // (On PostgreSQL the first 80 queries, 20 of each kind: the exhaustive ranking of a common word reads thousands of chunks.)
    for (const q of queries.slice(0, handle.kind === 'postgres' ? 80 : queries.length)) {
      const ours = await search.search(workspaceId, [baseId], q.text, TOP_K);
      const exhaustive = await reference.search(workspaceId, [baseId], q.text, TOP_K);
      const ourIds = new Set(ours.map((r) => r.chunk_id));
      const share = exhaustive.length === 0 ? 1 : exhaustive.filter((r) => ourIds.has(r.chunk_id)).length / exhaustive.length;
      const best = exhaustive.reduce((sum, r) => sum + r.score, 0);
      agreementByKind[q.kind] ??= { shares: [], scoreRatios: [] };
      const kind = agreementByKind[q.kind];
      kind.shares.push(share);
      kind.scoreRatios.push(best === 0 ? 1 : ours.reduce((sum, r) => sum + r.score, 0) / best);
      agreement += share;
      if (share < 1) disagreeing++;
    }
    const mean = (values: number[]) => Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 1000) / 1000;
    // A source added (10 chunks, the version bumped): the next query updates the cached vectors.
    await seed(db, workspaceId, baseId, 0, 10, 1);
    const afterChangeStarted = performance.now();
    await search.search(workspaceId, [baseId], 'after a change', TOP_K);
    const afterChangeMs = Math.round((performance.now() - afterChangeStarted) * 1000) / 1000;
    const hitRate = async (s: typeof search) => {
      let hits = 0;
      for (const q of QUESTIONS) {
        const results = await s.search(workspaceId, [baseId], q.question, 3);
        if (results.some((r) => squash(r.text).includes(squash(q.phrase)))) hits++;
        else if (process.env.BENCH_VERBOSE) console.error(`${label} ${mode} miss: ${q.question}`);
      }
      return Math.round((hits / QUESTIONS.length) * 1000) / 1000;
    };
    modes.push({
      mode,
      first_query_ms: loadMs,
      first_query_after_a_source_added_ms: afterChangeMs,
      first_pass: percentiles(first.samples),
      second_pass: percentiles(second.samples),
      first_pass_by_kind: byKind,
      hit_rate_top3: await hitRate(search),
      top5_agreement_with_exhaustive: Math.round((agreement / Object.values(agreementByKind).reduce((n, v) => n + v.shares.length, 0)) * 1000) / 1000,
      queries_differing_from_exhaustive: disagreeing,
      agreement_by_kind: Object.fromEntries(Object.entries(agreementByKind).map(([kind, v]) => [kind, { top5_agreement: mean(v.shares), top5_score_ratio: mean(v.scoreRatios) }])),
      ...(old ? { before: { first_pass: percentiles(first.oldSamples), second_pass: percentiles(second.oldSamples), hit_rate_top3: await hitRate(old) } } : {}),
    });
  }
  const select1 = percentiles(await timed(queries, () => sql`select 1`.execute(db)));
  return { database: label, chunks, seed_seconds: seedSeconds, statistics_refresh_ms: analyzeMs, queries: QUERIES, top_k: TOP_K, modes, baseline_select_1: select1 };
}

/** The in-memory vector scan alone (what a hybrid query adds per base), at growing sizes and two widths. */
function measureScan() {
  const random = prng(99);
  const rows = [];
  for (const dims of [256, 1536]) {
    for (const n of [2_000, 10_000, 50_000, 100_000, 200_000]) {
      if (n * dims * 4 > 1.3 * 1024 ** 3) continue;
      const matrix = new Float32Array(n * dims);
      for (let i = 0; i < matrix.length; i++) matrix[i] = random() - 0.5;
      const query = Float32Array.from({ length: dims }, () => random() - 0.5);
      for (let i = 0; i < 3; i++) nearestInMatrix(matrix, dims, query, 50);
      const samples: number[] = [];
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        nearestInMatrix(matrix, dims, query, 50);
        samples.push(performance.now() - started);
      }
      const p = percentiles(samples);
      rows.push({ dims, chunks: n, memory_mib: Math.round((n * dims * 4) / 1024 ** 2), scan_p50_ms: p.p50_ms, scan_p95_ms: p.p95_ms });
      console.log(`vector scan ${dims} dims × ${n}: ${Math.round((n * dims * 4) / 1024 ** 2)} MiB, p50 ${p.p50_ms} ms`);
    }
  }
  return rows;
}

/** The fake provider in a worker thread (bench/support/embeddings-far-end.ts). */
async function startFarEnd(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const worker = startModuleWorker(new URL('./support/embeddings-far-end.ts', import.meta.url));
  const { baseUrl } = await new Promise<{ baseUrl: string }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    baseUrl,
    close: async () => {
      worker.postMessage({ type: 'close' });
      await new Promise((resolve) => worker.once('exit', resolve));
    },
  };
}

const server = await startFarEnd();
const embeddings = createOpenAiEmbeddings({ baseUrl: server.baseUrl, model: MODEL });
const runs = [];
try {
  if (!ONLY || ONLY === 'pglite') {
    const handle = await openDatabase({});
    await migrateToLatest(handle);
    runs.push(await measureDatabase('pglite', handle, PGLITE_CHUNKS, embeddings));
    await handle.close();
  }
  const url = process.env.BENCH_DATABASE_URL;
  if (url && (!ONLY || ONLY === 'postgres')) {
    const schema = `bench_kb_${randomBytes(4).toString('hex')}`;
    const handle = await openDatabase({ databaseUrl: url, schema, poolSize: 4 });
    try {
      await migrateToLatest(handle);
      runs.push(await measureDatabase('postgresql', handle, PG_CHUNKS, embeddings));
    } finally {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(handle.db);
      await handle.close();
    }
  }
} finally {
  await server.close();
}
const scan = !ONLY || ONLY === 'scan' ? measureScan() : [];

const result = {
  benchmark: 'knowledge-base',
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, node: process.version },
  goals: { pglite: `p95 ≤ ${GOALS.pglite_p95_ms} ms at ${PGLITE_CHUNKS} chunks`, postgresql: `p95 ≤ ${GOALS.postgres_p95_ms} ms at ${PG_CHUNKS} chunks` },
  note:
    'hybrid embeds each query through a local fake OpenAI-compatible server (hashed bag of words, 256 dims) in a worker thread, so its latency includes one loopback HTTP round trip through the openai SDK but not a real provider. ' +
    'first_pass: a fresh search instance (word statistics not cached yet); second_pass: the same queries again.',
  runs,
  ...(url(process.env.BENCH_DATABASE_URL) ? {} : { postgresql: { skipped: 'BENCH_DATABASE_URL is not set' } }),
  vector_scan: scan,
};
function url(value: string | undefined) {
  return value !== undefined && value !== '';
}
const out = path.join(import.meta.dirname, 'results', 'knowledge-base.json');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
for (const r of runs) {
  for (const m of r.modes) {
    const before = m.before ? ` (before: first pass p50 ${m.before.first_pass.p50_ms} / p95 ${m.before.first_pass.p95_ms}, second p95 ${m.before.second_pass.p95_ms} ms, hit rate ${m.before.hit_rate_top3})` : '';
    console.log(
      `knowledge-base ${r.database} ${m.mode}: ${r.chunks} chunks, first pass p50 ${m.first_pass.p50_ms} / p95 ${m.first_pass.p95_ms} / p99 ${m.first_pass.p99_ms} ms, ` +
        `second pass p95 ${m.second_pass.p95_ms} ms${before}, hit rate ${m.hit_rate_top3}, top-5 agreement ${m.top5_agreement_with_exhaustive}, ` +
        `first query ${m.first_query_ms} ms, after a source added ${m.first_query_after_a_source_added_ms} ms | select 1 p50 ${r.baseline_select_1.p50_ms} ms`,
    );
  }
}
console.log(`wrote ${out}`);
