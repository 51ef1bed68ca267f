import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from './support/app.ts';

describe('platform HTTP behaviour', async () => {
  const t = await buildTestApp();

  it('GET /v1/health reports the database', async () => {
    const res = await t.request({ method: 'GET', url: '/v1/health' });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.status, 'ok');
    assert.equal(body.database.ok, true);
    assert.ok(['pglite', 'postgres'].includes(body.database.kind));
    assert.equal(res.headers['ratelimit-limit'], undefined, 'health is not rate limited');
  });

  it('answers an unknown route with a problem+json 404 carrying the request id', async () => {
    const res = await t.request({ method: 'GET', url: '/v1/does-not-exist', headers: { 'x-request-id': 'trace-123' } });
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(res.headers['x-request-id'], 'trace-123');
    assert.deepEqual(res.json(), {
      type: 'https://docs.voice-agent-platform.dev/errors/not_found',
      title: 'Not Found',
      status: 404,
      detail: 'no route for GET /v1/does-not-exist',
      code: 'not_found',
      request_id: 'trace-123',
    });
  });

  it('generates a request id when none is sent', async () => {
    const res = await t.request({ method: 'GET', url: '/v1/health' });
    assert.match(String(res.headers['x-request-id']), /^req_[0-9a-f]{20}$/);
  });

  it('serves Prometheus metrics counting requests by route', async () => {
    await t.request({ method: 'GET', url: '/v1/health' });
    const res = await t.request({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /http_requests_total\{method="GET",route="\/v1\/health",status="200"\} \d+/);
  });

  it('serves the OpenAPI document and the docs UI', async () => {
    const spec = await t.request({ method: 'GET', url: '/openapi.json' });
    assert.equal(spec.statusCode, 200);
    assert.equal(spec.json().openapi, '3.1.0');
    assert.ok(spec.json().components.schemas.Problem);
    const docs = await t.request({ method: 'GET', url: '/docs/' });
    assert.equal(docs.statusCode, 200);
    assert.match(docs.body, /swagger/i);
  });
});

describe('metrics token', async () => {
  const t = await buildTestApp({ env: { METRICS_TOKEN: 'metrics-secret' } });

  it('needs the bearer token when METRICS_TOKEN is set', async () => {
    const anonymous = await t.request({ method: 'GET', url: '/metrics' });
    assert.equal(anonymous.statusCode, 401);
    assert.equal(anonymous.json().code, 'unauthorized');
    const authorised = await t.request({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer metrics-secret' } });
    assert.equal(authorised.statusCode, 200);
  });
});
