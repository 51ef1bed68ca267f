// Knowledge-base retrieval benchmark: a 2,000-chunk knowledge base on PGlite (the three quality
// fixtures plus generated distractor text in the same domain), 500 queries through the same
// search function the API and the dialogue engine use; latency p50/p95/p99 and the top-3 hit rate
// of the fixture questions, full-text alone and hybrid (embeddings from a local fake
// OpenAI-compatible server). Baselines measured in the same run: a `select 1` round trip and a
// plain ILIKE scan over the same chunks.
//   node --import tsx bench/knowledge-base.bench.ts
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { migrateToLatest, openDatabase } from '../src/platform/db/database.ts';
import type { Database } from '../src/platform/db/schema.ts';
import { newId } from '../src/platform/ids.ts';
import { createOutboundClient } from '../src/platform/outbound/ssrf-guard.ts';
import { createKnowledgeBaseRepo } from '../src/modules/knowledge-base/repo.ts';
import { createKnowledgeSearch } from '../src/modules/knowledge-base/search.ts';
import { createKnowledgeBaseService } from '../src/modules/knowledge-base/service.ts';
import { FIXTURES, QUESTIONS, squash } from '../src/modules/knowledge-base/test-helpers.ts';
import { startFakeEmbeddingsServer } from '../src/providers/embeddings/fake-server.ts';
import { createOpenAiEmbeddings } from '../src/providers/embeddings/openai.ts';
import type { EmbeddingsProvider } from '../src/providers/embeddings/port.ts';
import { prng } from './prng.ts';

const TARGET_CHUNKS = 2000;
const QUERIES = Number(process.env.BENCH_QUERIES ?? 500);
const TOP_K = 3;

const VOCABULARY = (
  'agent call caller phone number minute wallet credit balance invoice campaign contact voice prompt transfer ' +
  'recording transcript webhook function schedule widget language model speech latency quality support ticket ' +
  'customer account workspace owner admin member key secret limit rate billing payment card refund tax report ' +
  'dashboard template version publish draft test simulator monitor alert sentiment summary extraction field ' +
  'country area code carrier route queue retry hour day week month year team manager email message document ' +
  'page guide upload file passage search answer question policy privacy consent storage audio volume noise ' +
  'network packet jitter server region backup restore export import list filter status error warning timeout'
).split(' ');
const FILLER = 'the a of to and in for on with by at from is are can will may should when after before each every your our this that'.split(' ');


function distractorDocument(random: () => number, paragraphs: number): string {
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const sentence = () => {
    const words = Array.from({ length: 8 + Math.floor(random() * 12) }, () => (random() < 0.45 ? pick(FILLER) : pick(VOCABULARY)));
    return `${words.join(' ').replace(/^./, (c) => c.toUpperCase())}.`;
  };
  return Array.from({ length: paragraphs }, () => Array.from({ length: 3 + Math.floor(random() * 4) }, sentence).join(' ')).join('\n\n');
}

function percentiles(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  const round = (v: number) => Math.round(v * 1000) / 1000;
  return { p50_ms: round(at(50)), p95_ms: round(at(95)), p99_ms: round(at(99)), mean_ms: round(sorted.reduce((s, v) => s + v, 0) / sorted.length), samples: sorted.length };
}

async function timed(n: number, fn: (i: number) => Promise<unknown>) {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await fn(i);
    samples.push(performance.now() - started);
  }
  return percentiles(samples);
}

async function buildBase(db: Database, embeddings: EmbeddingsProvider | undefined) {
  const now = new Date();
  const workspaceId = newId('ws');
  await db.insertInto('workspaces').values({ id: workspaceId, name: 'bench', created_by: null, created_at: now, updated_at: now }).execute();
  const search = createKnowledgeSearch({ db, embeddings });
  const service = createKnowledgeBaseService({
    db,
    clock: { now: () => new Date() },
    logger: pino({ level: 'silent' }),
    config: { allowPrivateUrls: true },
    outbound: createOutboundClient({ allowPrivate: true }),
    embeddings,
    repo: createKnowledgeBaseRepo(),
    search,
  });
  const ctx = { workspaceId, scope: 'write' as const, actor: { type: 'api_key' as const, id: 'bench', name: 'bench' } };
  const base = await service.create(ctx, { name: 'Bench knowledge base', language: 'en' });
  const types: Record<string, string> = { md: 'text/markdown', html: 'text/html', pdf: 'application/pdf' };
  for (const filename of ['guide.md', 'page.html', 'manual.pdf']) {
    await service.addFileSource(ctx, base.id, { filename, mimetype: types[filename.split('.').pop()!], bytes: fs.readFileSync(path.join(FIXTURES, filename)) });
  }
  const random = prng(42);
  let chunks = (await service.get(ctx, base.id)).chunk_count;
  let n = 0;
  while (chunks < TARGET_CHUNKS) {
    const paragraphs = Math.min(20, Math.max(2, Math.ceil(((TARGET_CHUNKS - chunks) * 800) / 450)));
    const source = await service.addJsonSource(ctx, base.id, { type: 'text', title: `Distractor ${++n}`, text: distractorDocument(random, paragraphs) });
    chunks += source.chunk_count;
  }
  return { ctx, base: { ...base, chunk_count: chunks }, search };
}

async function measure(mode: 'full_text' | 'hybrid', embeddings?: EmbeddingsProvider) {
  const database = await openDatabase({});
  await migrateToLatest(database);
  const db = database.db;
  const ingestStarted = performance.now();
  const { ctx, base, search } = await buildBase(db, embeddings);
  const ingestMs = performance.now() - ingestStarted;

  // First pass over the questions: the hit rate, and cold latencies (caches of document frequencies and vectors empty).
  let hits = 0;
  const coldSamples: number[] = [];
  for (const q of QUESTIONS) {
    const started = performance.now();
    const results = await search.search(ctx.workspaceId, [base.id], q.question, TOP_K);
    coldSamples.push(performance.now() - started);
    if (results.some((r) => squash(r.text).includes(squash(q.phrase)))) hits++;
    else if (process.env.BENCH_VERBOSE) console.error(`${mode} miss: ${q.question}`);
  }
  // Warm-up (plans, caches), then the measured queries: the fixture questions in turn.
  for (let i = 0; i < 20; i++) await search.search(ctx.workspaceId, [base.id], QUESTIONS[i % QUESTIONS.length].question, 5);
  const latency = await timed(QUERIES, (i) => search.search(ctx.workspaceId, [base.id], QUESTIONS[i % QUESTIONS.length].question, 5));

  const select1 = await timed(QUERIES, () => sql`select 1`.execute(db));
  const keyword = (q: string) => q.split(/\W+/).filter((w) => w.length > 4).sort((a, b) => b.length - a.length)[0] ?? q;
  const ilike = await timed(QUERIES, (i) =>
    db.selectFrom('knowledge_chunks').select(['id', 'text']).where('knowledge_base_id', '=', base.id).where('text', 'ilike', `%${keyword(QUESTIONS[i % QUESTIONS.length].question)}%`).limit(5).execute(),
  );
  await database.close();
  return {
    mode,
    chunks: base.chunk_count,
    ingest_seconds: Math.round(ingestMs) / 1000,
    query_latency: latency,
    first_pass_latency: percentiles(coldSamples),
    hit_rate_top3: Math.round((hits / QUESTIONS.length) * 1000) / 1000,
    questions: QUESTIONS.length,
    baselines: { select_1: select1, ilike_scan_limit_5: ilike },
  };
}

const fullText = await measure('full_text');
const server = await startFakeEmbeddingsServer();
const hybrid = await measure('hybrid', createOpenAiEmbeddings({ baseUrl: server.baseUrl, model: 'fake-embed-1' }));
await server.close();

const result = {
  benchmark: 'knowledge-base',
  date: new Date().toISOString(),
  node: process.version,
  database: 'pglite (in-memory)',
  queries: QUERIES,
  top_k: 5,
  note: 'hybrid uses a local fake OpenAI-compatible embeddings server (hashed bag of words, 256 dims); its latency excludes a real provider round trip',
  results: [fullText, hybrid],
};
const out = path.join(import.meta.dirname, 'results', 'knowledge-base.json');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
for (const r of result.results) {
  console.log(
    `knowledge-base ${r.mode}: ${r.chunks} chunks, p50 ${r.query_latency.p50_ms} ms, p95 ${r.query_latency.p95_ms} ms, p99 ${r.query_latency.p99_ms} ms, ` +
      `hit rate ${(r.hit_rate_top3 * 100).toFixed(1)} % | select 1 p50 ${r.baselines.select_1.p50_ms} ms, ILIKE p50 ${r.baselines.ilike_scan_limit_5.p50_ms} ms`,
  );
}
console.log(`wrote ${out}`);
