// What each per-request feature of the HTTP path costs on its own (issue 33, "the hot path"), in
// CPU nanoseconds per request, each measured here against its baseline in the same run:
//   metrics        — http_requests_total + http_request_duration_seconds: prom-client's Counter and
//                    Histogram (what the server used until issue 33; bound children re-hash their
//                    labels on every call in prom-client 15) against src/platform/http-metrics.ts;
//   rate limit     — one in-process consume and its RateLimit-* headers (platform/rate-limit.ts);
//   log line       — "request completed" with the server's serializers, formatted into a stream
//                    that drops it, then written to /dev/null asynchronously line by line (before)
//                    and through logDestination, in 4 KiB batches (after); a line a millisecond,
//                    each in its own turn, as requests complete; CPU of the writing threads included;
//   serialisation  — the Agent response of GET /v1/agents/{id} through the compiled response
//                    schema (fast-json-stringify, Fastify's) against JSON.stringify.
// Rounds alternate the variants; the median round is reported. About 80 s, one process.
//   npm run bench -- hot-path
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep, setImmediate as turn } from 'node:timers/promises';
import fastJson from 'fast-json-stringify';
import pino from 'pino';
import { Counter, Histogram, Registry } from 'prom-client';
import { Agent } from '../src/modules/agents/schemas.ts';
import { createHttpMetrics } from '../src/platform/http-metrics.ts';
import { LOG_FLUSH_MS, LOG_SERIALIZERS, logDestination } from '../src/platform/logging.ts';
import { createRateLimiter } from '../src/platform/rate-limit.ts';
import { benchDataDir, buildBenchApp } from './support/bench-app.ts';

const CALLS = 100_000;
/** What the serialisers wrote, reported: their output is used, so no work is optimised away. */
let serialisedBytes = 0;
const ROUNDS = 5;
/** Calls between two turns of the event loop (32 connections' worth of requests). */
const BATCH = 32;
/**
 * Log lines: one a millisecond, each in its own turn of the loop, as requests complete. A write
 * of a line then ends before the next line comes (the http bench's profile: an fs.write per
 * request); lines written back to back would be gathered by the writer anyway.
 */
const LINES = 3_000;
const LINE_EVERY_MS = 1;
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const ROUTES = ['/v1/agents/:id', '/v1/auth/me', '/v1/calls', '/v1/calls/:id'];

type Work = (i: number) => void | Promise<void>;

/** CPU (every thread of the process) per call of `work`, in ns, BATCH calls to a turn of the event loop. */
async function cpuPerCall(work: Work): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i += BATCH) {
    for (let j = i; j < i + BATCH; j++) {
      const done = work(j);
      if (done) await done;
    }
    await turn();
  }
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / CALLS;
}

/** CPU per line of `work` called once every LINE_EVERY_MS, the writes it started included. */
async function cpuPerPacedLine(work: Work): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < LINES; i++) {
    await work(i);
    await sleep(LINE_EVERY_MS);
  }
  // The last batch and writes in flight are part of the cost.
  await sleep(LOG_FLUSH_MS * 2);
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / LINES;
}

function metricsVariants(): Record<string, Work> {
  const registry = new Registry();
  const requests = new Counter({ name: 'http_requests_total', help: 'h', labelNames: ['method', 'route', 'status'], registers: [registry] });
  const duration = new Histogram({ name: 'http_request_duration_seconds', help: 'h', labelNames: ['method', 'route'], buckets: BUCKETS, registers: [registry] });
  const http = createHttpMetrics({ registry: new Registry(), buckets: BUCKETS });
  return {
    'metrics: prom-client Counter + Histogram (before)': (i) => {
      const route = ROUTES[i % ROUTES.length];
      requests.inc({ method: 'GET', route, status: '200' });
      duration.observe({ method: 'GET', route }, 0.0031);
    },
    'metrics: http-metrics.ts (after)': (i) => http.record('GET', ROUTES[i % ROUTES.length], 200, 0.0031),
  };
}

function rateLimitVariants(): Record<string, Work> {
  const limiter = createRateLimiter({ principalPerMin: 1e12, ipPerMin: 1e12, demoPerMin: 1e12 });
  const headers: Record<string, string> = {};
  return {
    'rate limit: consume + headers': async (i) => {
      const decision = await limiter.consume('principal', `key_${i % 64}`);
      Object.assign(headers, decision.headers);
    },
  };
}

function logVariants(): Record<string, Work> {
  const request = { method: 'GET', url: '/v1/agents/agt_01HZX3V9J4K2M8N6P0Q5R7S1T3', ip: '127.0.0.1' };
  const reply = { statusCode: 200 };
  const serializers = { ...LOG_SERIALIZERS, res: (r: { statusCode: number }) => ({ statusCode: r.statusCode }) };
  const into = (destination: pino.DestinationStream) => pino({ level: 'info', serializers }, destination).child({ reqId: 'req-1' });
  const dropped = into({ write() {} });
  const lineByLine = into(pino.destination({ dest: '/dev/null', sync: false }));
  const batched = into(logDestination('/dev/null'));
  const line = (logger: pino.Logger) => () => logger.info({ req: request, res: reply, responseTime: 1.2345 }, 'request completed');
  return {
    'log line: formatted, dropped': line(dropped),
    'log line: written line by line (before)': line(lineByLine),
    'log line: written in 4 KiB batches, logDestination (after)': line(batched),
  };
}

/** An agent as GET /v1/agents/{id} answers it: created through the real app on a fresh PGlite. */
async function realAgent(): Promise<Record<string, unknown>> {
  const dataDir = benchDataDir('hot-path');
  const { app, database } = await buildBenchApp(dataDir);
  try {
    const payload = { email: 'hot-path@example.com', password: 'correct horse battery' };
    await app.inject({ method: 'POST', url: '/v1/auth/register', payload });
    const jwt = (await app.inject({ method: 'POST', url: '/v1/auth/login', payload })).json().access_token as string;
    const prompt = 'You are Ada, the front desk of a small bistro. Answer briefly and warmly. '.repeat(6);
    const created = await app.inject({ method: 'POST', url: '/v1/agents', headers: { authorization: `Bearer ${jwt}` }, payload: { name: 'Bistro front desk', prompt } });
    if (created.statusCode !== 201) throw new Error(`agent: ${created.body}`);
    return (await app.inject({ method: 'GET', url: `/v1/agents/${created.json().id}`, headers: { authorization: `Bearer ${jwt}` } })).json();
  } finally {
    await app.close();
    await database.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function serialisationVariants(agent: Record<string, unknown>): Record<string, Work> {
  const compiled = fastJson(Agent as object);
  return {
    'serialisation: JSON.stringify': () => {
      serialisedBytes += JSON.stringify(agent).length;
    },
    'serialisation: response schema (fast-json-stringify)': () => {
      serialisedBytes += compiled(agent).length;
    },
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const groups = { metrics: metricsVariants(), 'rate limit': rateLimitVariants(), 'log line': logVariants(), serialisation: serialisationVariants(await realAgent()) };
const measure = (group: string, work: Work) => (group === 'log line' ? cpuPerPacedLine(work) : cpuPerCall(work));
const results: Record<string, Record<string, { ns_per_request: number; rounds: number[] }>> = {};
for (const [group, variants] of Object.entries(groups)) {
  const rounds: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  // A warm-up round (JIT), then the measured ones, the variants in turn.
  for (const work of Object.values(variants)) await measure(group, work);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, work] of Object.entries(variants)) rounds[name].push(await measure(group, work));
  }
  results[group] = Object.fromEntries(Object.entries(rounds).map(([name, values]) => [name, { ns_per_request: Math.round(median(values)), rounds: values.map(Math.round) }]));
  for (const [name, { ns_per_request }] of Object.entries(results[group])) console.log(`${name.padEnd(58)} ${String(ns_per_request).padStart(6)} ns per request`);
}

const report = { bench: 'hot-path', at: new Date().toISOString(), calls_per_round: CALLS, rounds: ROUNDS, load_average: (await import('node:os')).loadavg(), serialised_bytes: serialisedBytes, results };
const out = path.join(import.meta.dirname, 'results', 'hot-path.json');
fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
console.log(`written to ${path.relative(process.cwd(), out)}`);
process.exit(0);
