import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from './support/app.ts';
import { signUp } from './support/fixtures.ts';

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
      type: 'http://localhost:3000/docs/errors#not_found',
      title: 'Not Found',
      status: 404,
      detail: 'no route for GET /v1/does-not-exist',
      code: 'not_found',
      request_id: 'trace-123',
    });
  });

  it('answers a body of a type the route does not take with 415, text/plain included', async () => {
    for (const contentType of ['text/plain', 'application/xml']) {
      const res = await t.request({ method: 'POST', url: '/v1/auth/login', payload: 'email=a@example.com', headers: { 'content-type': contentType } });
      assert.equal(res.statusCode, 415, `${contentType}: ${res.body}`);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(res.json().code, 'unsupported_media_type');
    }
  });

  it('treats a POST without a body, or with an empty JSON one, as {}', async () => {
    const user = await signUp(t);
    for (const headers of [{}, { 'content-type': 'application/json' }]) {
      const login = await t.request({ method: 'POST', url: '/v1/auth/login', headers });
      assert.equal(login.statusCode, 422, login.body);
      assert.deepEqual(login.json().errors.map((e: { path: string }) => e.path), ['email', 'password']);
      const resend = await t.request({ method: 'POST', url: '/v1/auth/verify-email/resend', token: user.accessToken, headers });
      assert.equal(resend.statusCode, 202, resend.body);
    }
    const blank = await t.request({ method: 'POST', url: '/v1/auth/login', payload: ' ', headers: { 'content-type': 'application/json' } });
    assert.equal(blank.statusCode, 400, blank.body);
    assert.equal(blank.json().code, 'invalid_json');
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
    // The request headers the service reads are documented where they apply.
    const headersOf = (path: string, method: string) =>
      ((spec.json().paths[path][method].parameters ?? []) as Array<{ in: string; name: string }>).filter((p) => p.in === 'header').map((p) => p.name).sort();
    assert.deepEqual(headersOf('/v1/api-keys', 'post'), ['Idempotency-Key', 'X-Workspace-Id']);
    assert.deepEqual(headersOf('/v1/api-keys', 'get'), ['X-Workspace-Id']);
    assert.deepEqual(headersOf('/v1/auth/login', 'post'), ['Idempotency-Key']);
    assert.deepEqual(headersOf('/v1/auth/me', 'get'), [], 'a user route acts in no workspace');
    assert.deepEqual(headersOf('/v1/workspaces/{id}', 'get'), [], 'the path names the workspace');
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
