import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanStatusCode } from '@opentelemetry/api';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { Registry } from 'prom-client';
import { insertCallRow, journalRig, seedWorkspace } from '../../../test/support/call-rows.ts';
import type { Database } from '../../platform/db/schema.ts';
import type { RuntimeClock } from '../../ports/clock.ts';
import { callTraceSpan, wallTimeOf } from './call-trace.ts';
import { registerCallGauges } from './gauges.ts';
import type { CallRunner } from './runner.ts';

// The calls gauges (gauges.ts) read at scrape time from a runner's registry and the test
// database, and the runtime's tracing port over OpenTelemetry (call-trace.ts) with an in-memory exporter.

const silent = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
const { db } = await journalRig();

function runnerOf(size: number, sessions: Array<[string, number]>) {
  return { size, mediaSessions: () => new Map(sessions) } as unknown as CallRunner;
}

async function values(registry: Registry) {
  const out: Record<string, number> = {};
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const v of metric.values) {
      const labels = Object.entries(v.labels ?? {}).map(([k, l]) => `${k}=${l}`);
      out[[metric.name, ...labels].join(',')] = v.value;
    }
  }
  return out;
}

describe('registerCallGauges', () => {
  it('live calls, media sessions by transport, queued calls and pending post-call jobs', async () => {
    const ws = await seedWorkspace(db);
    for (const status of ['queued', 'queued', 'queued', 'ringing'] as const) await insertCallRow(db, ws, status);
    await insertCallRow(db, ws, 'completed', { post_call_due_at: new Date() });
    await insertCallRow(db, ws, 'failed', { post_call_due_at: new Date() });
    await insertCallRow(db, ws, 'completed');
    const registry = new Registry();
    registerCallGauges(registry, { db, runner: runnerOf(5, [['sandbox', 2], ['twilio', 1]]), logger: silent });
    assert.deepEqual(await values(registry), {
      vap_calls_live: 5,
      'vap_media_sessions,transport=sandbox': 2,
      'vap_media_sessions,transport=twilio': 1,
      vap_calls_queued: 3,
      vap_post_call_jobs_pending: 2,
    });
    // Each scrape reads again (a read is shared by the two gauges of one scrape only).
    await insertCallRow(db, ws, 'queued');
    const again = await values(registry);
    assert.deepEqual([again.vap_calls_queued, again.vap_post_call_jobs_pending], [4, 2]);
  });

  it('a transport gone since the last scrape is no longer reported', async () => {
    const registry = new Registry();
    let sessions: Array<[string, number]> = [['sandbox', 1], ['web', 1]];
    registerCallGauges(registry, { db, runner: { size: 0, mediaSessions: () => new Map(sessions) } as unknown as CallRunner, logger: silent });
    await values(registry);
    sessions = [['web', 1]];
    const after = await values(registry);
    assert.equal(after['vap_media_sessions,transport=sandbox'], undefined);
    assert.equal(after['vap_media_sessions,transport=web'], 1);
  });

  it('a failed query: both database gauges NaN', async () => {
    const registry = new Registry();
    const broken = {
      selectFrom() {
        throw new Error('database down');
      },
    } as unknown as Database;
    registerCallGauges(registry, { db: broken, runner: runnerOf(1, []), logger: silent });
    const read = await values(registry);
    assert.ok(Number.isNaN(read.vap_calls_queued));
    assert.ok(Number.isNaN(read.vap_post_call_jobs_pending));
    assert.equal(read.vap_calls_live, 1);
  });
});

const clockAt = (now: number, scale: number) => ({ now: () => now, scale }) as unknown as RuntimeClock;

describe('wallTimeOf', () => {
  it('a moment of the clock: now less the clock time since then at its scale (scale within 0..1)', () => {
    const before = performance.timeOrigin + performance.now();
    const real = wallTimeOf(clockAt(10_000, 1))(4000);
    const after = performance.timeOrigin + performance.now();
    assert.ok(real >= before - 6000 && real <= after - 6000, 'scale 1: 6 s ago');
    const half = wallTimeOf(clockAt(10_000, 0.5))(4000);
    assert.ok(half >= before - 3000 && half <= performance.timeOrigin + performance.now() - 3000, 'scale 0.5: 3 s ago');
    const capped = wallTimeOf(clockAt(10_000, 20))(4000);
    assert.ok(capped >= before - 6000 && capped <= performance.timeOrigin + performance.now() - 6000, 'a scale above 1 counts as 1');
    const virtual = wallTimeOf(clockAt(10_000, Number.POSITIVE_INFINITY))(4000);
    assert.ok(virtual >= before && virtual <= performance.timeOrigin + performance.now(), 'unbounded: now');
    const negative = wallTimeOf(clockAt(10_000, -1))(4000);
    assert.ok(negative >= before && negative <= performance.timeOrigin + performance.now(), 'a negative scale counts as 0');
  });
});

describe('callTraceSpan', () => {
  it('children of the call span, timed on the clock, their attributes, failures and ends; the call span is not ended', () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const call = tracer.startSpan('call');
    const port = callTraceSpan(tracer, call, clockAt(10_000, 1));
    const turn = port.child('turn', 4000, { 'vap.turn': 1 });
    const stt = turn.child('stt', 5000);
    stt.set({ duration_ms: 1000 });
    stt.fail('stt_failed');
    stt.end(6000);
    turn.end(8000);
    port.set({ 'vap.call.turns': 1 });
    port.fail('media_error');
    port.end(9000);
    const [sttSpan, turnSpan] = exporter.getFinishedSpans();
    assert.deepEqual(
      exporter.getFinishedSpans().map((s) => s.name),
      ['stt', 'turn'],
      'the call span is left to the runner',
    );
    assert.equal(turnSpan.parentSpanContext?.spanId, call.spanContext().spanId);
    assert.equal(sttSpan.parentSpanContext?.spanId, turnSpan.spanContext().spanId);
    assert.equal(turnSpan.attributes['vap.turn'], 1);
    assert.equal(sttSpan.attributes.duration_ms, 1000);
    assert.deepEqual(sttSpan.status, { code: SpanStatusCode.ERROR, message: 'stt_failed' });
    assert.equal(sttSpan.attributes['error.type'], 'stt_failed');
    const msOf = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
    assert.ok(Math.abs(msOf(turnSpan.endTime) - msOf(turnSpan.startTime) - 4000) < 50, 'turn: 4 s of clock');
    assert.ok(Math.abs(msOf(sttSpan.startTime) - msOf(turnSpan.startTime) - 1000) < 50, 'stt starts 1 s into the turn');
    call.end();
    const callSpan = exporter.getFinishedSpans()[2];
    assert.equal(callSpan.attributes['vap.call.turns'], 1);
    assert.deepEqual(callSpan.status, { code: SpanStatusCode.ERROR, message: 'media_error' });
  });
});
