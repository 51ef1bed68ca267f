// Event-loop benchmark (issue 13): does CPU-heavy work stall the other requests? The real server
// (`node --import tsx src/server.ts`, PGlite in a temporary DATA_DIR) runs as a child process; this
// process is only the client, over HTTP on 127.0.0.1. Measured: GET /v1/health latency at rest
// (the baseline, same run), then under two loads, with the heavy endpoints' throughput:
//   previews — 8 clients asking for voice previews of 300 characters (the issue's attack);
//   mixed    — 8 clients cycling through previews, knowledge-base queries of the longest allowed
//              text, and sources of about 900,000 characters (JSON text, HTML, DOCX, PDF).
// Bounded: under a minute per server, 9 connections.
//   node --import tsx bench/loop.bench.ts
//   BENCH_BEFORE_ROOT=/tmp/before node --import tsx bench/loop.bench.ts
// BENCH_BEFORE_ROOT names another checkout of this project (e.g. `git archive HEAD | tar -x -C
// /tmp/before`, node_modules symlinked): its server is measured first, as "before".
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { makeDocx, makePdf } from '../src/modules/knowledge-base/fixtures/documents.ts';
import { multipart } from '../src/modules/knowledge-base/test-helpers.ts';
import { prng } from './prng.ts';
import { freePort } from '../test/support/ports.ts';

type Kind = 'preview' | 'query' | 'source';

const CLIENTS = 8;
const BASELINE_MS = 5_000;
const PHASES: Array<{ name: string; kinds: Kind[]; ms: number }> = [
  { name: 'previews', kinds: ['preview'], ms: 8_000 },
  { name: 'mixed', kinds: ['preview', 'query', 'source'], ms: 20_000 },
];
const REQUEST_TIMEOUT_MS = 30_000;
const PREVIEW_CHARS = 300;
const SOURCE_CHARS = 900_000;

const VOCABULARY = (
  'agent call caller phone number minute wallet credit balance invoice campaign contact voice prompt transfer recording ' +
  'transcript webhook function schedule widget language model speech latency quality support ticket customer account ' +
  'workspace owner admin member secret limit billing payment refund report dashboard template version publish draft ' +
  'simulator monitor alert sentiment summary extraction country carrier route queue retry team manager email message ' +
  'document guide upload passage answer question policy privacy consent storage audio volume noise network jitter region'
).split(' ');

function paragraphs(chars: number, seed: number): string[] {
  const random = prng(seed);
  const word = () => VOCABULARY[Math.floor(random() * VOCABULARY.length)] + (random() < 0.15 ? String(Math.floor(random() * 500)) : '');
  const sentence = () => `${Array.from({ length: 8 + Math.floor(random() * 10) }, word).join(' ').replace(/^./, (c) => c.toUpperCase())}.`;
  const out: string[] = [];
  let length = 0;
  while (length < chars) {
    const paragraph = Array.from({ length: 3 + Math.floor(random() * 4) }, sentence).join(' ');
    out.push(paragraph);
    length += paragraph.length + 2;
  }
  return out;
}

function percentiles(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
  const round = (v: number) => Math.round(v * 10) / 10;
  return { samples: sorted.length, p50_ms: round(at(50)), p95_ms: round(at(95)), p99_ms: round(at(99)), max_ms: round(sorted.at(-1) ?? 0) };
}

interface Server {
  base: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startServer(root: string): Promise<Server> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-loop-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      RATE_LIMIT_USER_PER_MIN: '1000000',
      RATE_LIMIT_IP_PER_MIN: '1000000',
    },
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server in ${root} exited with ${child.exitCode}`);
    const ok = await request(`${base}/v1/health`).then(
      async (res) => {
        await res.body.dump();
        return res.statusCode === 200;
      },
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`the server in ${root} did not answer within 60 s`);
    await sleep(200);
  }
  return {
    base,
    child,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000).then(() => child.kill('SIGKILL'))]);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One JSON (or multipart) request; resolves with the status and the parsed body. */
async function call(dispatcher: Agent, method: 'GET' | 'POST', url: string, options: { token?: string; workspaceId?: string; json?: unknown; body?: Buffer; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.workspaceId) headers['x-workspace-id'] = options.workspaceId;
  let body: string | Buffer | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] = 'application/json';
  }
  const res = await request(url, { dispatcher, method, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await res.body.text();
  return { status: res.statusCode, json: () => JSON.parse(text) };
}

async function setUp(server: Server, agent: Agent) {
  const email = `loop-${Date.now()}@example.com`;
  const password = 'correct horse battery';
  const registered = await call(agent, 'POST', `${server.base}/v1/auth/register`, { json: { email, password } });
  if (registered.status !== 201) throw new Error(`register: ${registered.status}`);
  const login = await call(agent, 'POST', `${server.base}/v1/auth/login`, { json: { email, password } });
  const token = login.json().access_token as string;
  const workspaceId = (await call(agent, 'GET', `${server.base}/v1/workspaces`, { token })).json().data[0].id as string;
  const key = async (scope: string) => (await call(agent, 'POST', `${server.base}/v1/api-keys`, { token, workspaceId, json: { name: scope, scope } })).json().key as string;
  const readKey = await key('read-only');
  const writeKey = await key('write');
  const base = async (name: string) => (await call(agent, 'POST', `${server.base}/v1/knowledge-base`, { token: writeKey, json: { name } })).json().id as string;
  // The queried base holds a fixed text; the sources under load go to another one.
  const queried = await base('queried');
  const ingested = await base('ingested');
  for (const [i, chars] of [300_000, 300_000].entries()) {
    const res = await call(agent, 'POST', `${server.base}/v1/knowledge-base/${queried}/sources`, { token: writeKey, json: { type: 'text', title: `seed ${i}`, text: paragraphs(chars, 100 + i).join('\n\n') } });
    if (res.status !== 201) throw new Error(`seeding: ${res.status}`);
  }
  const openapi = (await call(agent, 'GET', `${server.base}/openapi.json`)).json();
  const maxQuery = openapi.paths['/v1/knowledge-base/{id}/query'].post.requestBody.content['application/json'].schema.properties.query.maxLength as number;
  return { readKey, writeKey, queried, ingested, maxQuery };
}

type Setup = Awaited<ReturnType<typeof setUp>>;
type Send = (kind: Kind) => Promise<{ status: number }>;

/** The heavy requests: previews of 300 characters, queries of the longest allowed text, ~900,000-character sources. */
function heavyRequests(server: Server, setup: Setup, agent: Agent): Send {
  const documents = paragraphs(SOURCE_CHARS, 7);
  const text = documents.join('\n\n').slice(0, SOURCE_CHARS);
  const html = Buffer.from(`<html><head><title>Load</title></head><body>${documents.map((p, i) => (i % 20 === 0 ? `<h2>Part ${i}</h2>` : `<p>${p}</p>`)).join('\n')}</body></html>`);
  const docx = makeDocx(documents);
  const pdf = makePdf(documents.slice(0, Math.ceil(documents.length / 3)));
  const random = prng(3);
  const longQuery = Array.from({ length: setup.maxQuery }, () => VOCABULARY[Math.floor(random() * VOCABULARY.length)] + String.fromCharCode(97 + Math.floor(random() * 26)))
    .join(' ')
    .slice(0, setup.maxQuery);
  const uploads = [
    () => ({ json: { type: 'text', title: 'Load text', text } }),
    () => multipart({}, { filename: 'load.html', contentType: 'text/html', data: html }),
    () => multipart({}, { filename: 'load.docx', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', data: docx }),
    () => multipart({}, { filename: 'load.pdf', contentType: 'application/pdf', data: pdf }),
  ];
  const sources = `${server.base}/v1/knowledge-base/${setup.ingested}/sources`;
  let n = 0;
  return (kind) => {
    const i = n++;
    if (kind === 'preview') {
      const speech = `Call number ${i}. ${paragraphs(PREVIEW_CHARS, i).join(' ')}`.slice(0, PREVIEW_CHARS);
      return call(agent, 'GET', `${server.base}/v1/voices/builtin-ava/preview?text=${encodeURIComponent(speech)}`, { token: setup.readKey });
    }
    if (kind === 'query') return call(agent, 'POST', `${server.base}/v1/knowledge-base/${setup.queried}/query`, { token: setup.writeKey, json: { query: longQuery, top_k: 5 } });
    const upload = uploads[i % uploads.length]();
    return 'json' in upload
      ? call(agent, 'POST', sources, { token: setup.writeKey, json: upload.json })
      : call(agent, 'POST', sources, { token: setup.writeKey, body: upload.payload, headers: upload.headers });
  };
}

/** Sequential GET /v1/health (10 ms apart, on its own connection) until `until()`. */
async function probeHealth(server: Server, agent: Agent, until: () => boolean) {
  const samples: number[] = [];
  while (!until()) {
    const started = performance.now();
    const res = await request(`${server.base}/v1/health`, { dispatcher: agent, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    await res.body.dump();
    samples.push(performance.now() - started);
    await sleep(10);
  }
  return percentiles(samples);
}

/** CLIENTS clients cycle through `kinds` for `ms` (then finish what they sent) while `probe` runs. */
async function load(send: Send, probe: (until: () => boolean) => ReturnType<typeof probeHealth>, kinds: Kind[], ms: number) {
  const stats = new Map<Kind, { latencies: number[]; statuses: Record<string, number> }>(kinds.map((kind) => [kind, { latencies: [], statuses: {} }]));
  const started = Date.now();
  const clients = Array.from({ length: CLIENTS }, async (_, c) => {
    for (let j = c; Date.now() < started + ms; j++) {
      const kind = kinds[j % kinds.length];
      const entry = stats.get(kind)!;
      const sent = performance.now();
      const status = await send(kind).then(
        (res) => String(res.status),
        (error: Error) => error.name,
      );
      entry.latencies.push(performance.now() - sent);
      entry.statuses[status] = (entry.statuses[status] ?? 0) + 1;
    }
  });
  let done = false;
  const health = probe(() => done);
  await Promise.all(clients);
  done = true;
  const seconds = (Date.now() - started) / 1000;
  const heavy = Object.fromEntries(
    [...stats].map(([kind, s]) => {
      const ok = Object.entries(s.statuses).filter(([code]) => code.startsWith('2')).reduce((sum, [, count]) => sum + count, 0);
      const { p50_ms, p95_ms, max_ms } = percentiles(s.latencies);
      return [kind, { requests: s.latencies.length, ok, ok_per_second: Math.round((ok / seconds) * 100) / 100, statuses: s.statuses, p50_ms, p95_ms, max_ms }];
    }),
  );
  return { seconds: Math.round(seconds * 10) / 10, health: await health, heavy };
}

async function measure(root: string) {
  const server = await startServer(root);
  const heavyAgent = new Agent({ connections: CLIENTS });
  const probeAgent = new Agent({ connections: 1 });
  try {
    const setup = await setUp(server, heavyAgent);
    const probe = (until: () => boolean) => probeHealth(server, probeAgent, until);
    const restEnds = Date.now() + BASELINE_MS;
    const atRest = await probe(() => Date.now() > restEnds);
    const send = heavyRequests(server, setup, heavyAgent);
    const loads: Record<string, Awaited<ReturnType<typeof load>>> = {};
    for (const phase of PHASES) loads[phase.name] = await load(send, probe, phase.kinds, phase.ms);
    return { server_root: root, health_at_rest: atRest, loads };
  } finally {
    await heavyAgent.close();
    await probeAgent.close();
    await server.stop();
  }
}

const root = path.resolve(import.meta.dirname, '..');
const beforeRoot = process.env.BENCH_BEFORE_ROOT;
const before = beforeRoot ? await measure(path.resolve(beforeRoot)) : undefined;
const after = await measure(root);

const result = {
  benchmark: 'loop',
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.availableParallelism(),
  load_average_at_end: os.loadavg().map((v) => Math.round(v * 100) / 100),
  clients: CLIENTS,
  note:
    'health is probed sequentially (10 ms pause) on its own connection; previews: 8 clients of 300-character previews; mixed: each client cycles preview → query (longest allowed) → source (~900k chars: JSON text, HTML, DOCX, PDF in turn). ' +
    'The issue reported health p99 2 ms at rest and 1,663 ms under 8 parallel previews before the change.',
  ...(before ? { before } : {}),
  after,
};
const out = path.join(import.meta.dirname, 'results', 'loop.json');
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
for (const [label, run] of Object.entries({ before, after })) {
  if (!run) continue;
  const phases = Object.entries(run.loads).map(([name, l]) => {
    const rates = Object.entries(l.heavy).map(([kind, h]) => `${kind} ${h.ok_per_second}/s`).join(', ');
    return `${name}: health p99 ${l.health.p99_ms} ms (p50 ${l.health.p50_ms}, max ${l.health.max_ms}; ${rates})`;
  });
  console.log(`loop ${label}: health p99 at rest ${run.health_at_rest.p99_ms} ms | ${phases.join(' | ')}`);
}
console.log(`wrote ${out}`);
