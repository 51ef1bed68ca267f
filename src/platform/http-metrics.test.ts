import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { createHttpMetrics } from './http-metrics.ts';

// The per-request series counted by hand must read exactly as prom-client's own Counter and
// Histogram would write them: the same observations into both, the same /metrics text.

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** [method, route, status, seconds]: bounds hit exactly, beyond the last, several statuses and routes. */
const REQUESTS: Array<[string, string, number, number]> = [
  ['GET', '/v1/agents/:id', 200, 0.0031],
  ['GET', '/v1/agents/:id', 200, 0.005],
  ['GET', '/v1/agents/:id', 404, 0.0009],
  ['GET', '/v1/agents/:id', 200, 0.001],
  ['POST', '/v1/agents', 201, 0.042],
  ['POST', '/v1/agents', 422, 0],
  ['GET', '/v1/auth/me', 200, 7.5],
  ['GET', '/v1/auth/me', 401, 5],
  ['HEAD', '/v1/auth/me', 200, 0.25],
  ['GET', 'unmatched', 404, 0.0123],
];

function withPromClient() {
  const registry = new Registry();
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests by method, route and status', labelNames: ['method', 'route', 'status'], registers: [registry] });
  const duration = new Histogram({ name: 'http_request_duration_seconds', help: 'HTTP request duration by method and route', labelNames: ['method', 'route'], buckets: BUCKETS, registers: [registry] });
  return {
    registry,
    record(method: string, route: string, status: number, seconds: number) {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ method, route }, seconds);
    },
  };
}

function withHttpMetrics() {
  const registry = new Registry();
  return { registry, ...createHttpMetrics({ registry, buckets: BUCKETS }) };
}

/** The exposition with each series' lines sorted (prom-client lists label sets in first-seen order; so do we). */
async function exposition(registry: Registry) {
  return (await registry.metrics()).split('\n\n').map((block) => block.split('\n').sort().join('\n'));
}

/** prom-client's instruments and ours, each given every request of REQUESTS. */
function bothFedTheRequests() {
  const reference = withPromClient();
  const ours = withHttpMetrics();
  for (const [method, route, status, seconds] of REQUESTS) {
    reference.record(method, route, status, seconds);
    ours.record(method, route, status, seconds);
  }
  return { reference, ours };
}

describe('http metrics', () => {
  it('write the same exposition as prom-client’s Counter and Histogram for the same requests', async () => {
    const { reference, ours } = bothFedTheRequests();
    const expected = await exposition(reference.registry);
    assert.deepEqual(await exposition(ours.registry), expected);
    // Not vacuous: the requests are there, in the buckets they fall in.
    const text = await ours.registry.metrics();
    assert.match(text, /http_requests_total\{method="GET",route="\/v1\/agents\/:id",status="200"\} 3\n/);
    assert.match(text, /http_request_duration_seconds_bucket\{le="0.001",method="GET",route="\/v1\/agents\/:id"\} 2\n/);
    assert.match(text, /http_request_duration_seconds_bucket\{le="5",method="GET",route="\/v1\/auth\/me"\} 1\n/);
    assert.match(text, /http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/v1\/auth\/me"\} 2\n/);
    assert.match(text, /http_request_duration_seconds_count\{method="POST",route="\/v1\/agents"\} 2\n/);
  });

  it('are read as JSON and reset like prom-client’s', async () => {
    const { reference, ours } = bothFedTheRequests();
    type Value = { metricName?: string; value: number; labels: Record<string, unknown> };
    const canonical = (v: Value) => JSON.stringify([v.metricName, v.value, Object.entries(v.labels).sort()]);
    const json = async (registry: Registry) =>
      (await registry.getMetricsAsJSON()).map((m) => ({ name: m.name, help: m.help, type: m.type, values: (m.values as Value[]).map(canonical).sort() }));
    assert.deepEqual(await json(ours.registry), await json(reference.registry));
    ours.registry.resetMetrics();
    reference.registry.resetMetrics();
    ours.record('GET', '/v1/health', 200, 0.002);
    reference.record('GET', '/v1/health', 200, 0.002);
    const after = await exposition(ours.registry);
    assert.ok(!after.join('\n').includes('/v1/agents'), 'the counts before the reset are gone');
    assert.deepEqual(after, await exposition(reference.registry));
  });
});
