import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildTestApp } from './support/app.ts';

// Security by default: every operation in openapi.json that is not public refuses a request
// without credentials, and one with a malformed token, with 401 problem+json — whatever its body.

const spec = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'openapi.json'), 'utf8'));
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const operations = Object.entries(spec.paths as Record<string, Record<string, { security?: unknown[] }>>).flatMap(([p, item]) =>
  Object.entries(item)
    .filter(([m, op]) => METHODS.includes(m) && !(Array.isArray(op.security) && op.security.length === 0))
    .map(([m]) => ({ method: m.toUpperCase(), path: p.replace(/\{[^}]+\}/g, 'x_00000000000000000000000000') })),
);

describe('every authenticated operation refuses anonymous callers', async () => {
  const t = await buildTestApp();
  for (const op of operations) {
    it(`${op.method} ${op.path}`, async () => {
      const payload = op.method === 'GET' || op.method === 'DELETE' ? undefined : { anything: true };
      const none = await t.request({ method: op.method as 'GET', url: op.path, payload });
      assert.equal(none.statusCode, 401, none.body);
      assert.equal(none.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(none.json().code, 'unauthorized');
      const malformed = await t.request({ method: op.method as 'GET', url: op.path, payload, headers: { authorization: 'Bearer eyJhbGciOiJub25lIn0.e30.' } });
      assert.equal(malformed.statusCode, 401, malformed.body);
      assert.equal(malformed.json().code, 'invalid_token');
    });
  }
});

describe('public operations are marked public in openapi.json', () => {
  it('lists the auth entry points among them', () => {
    const publicOps = Object.entries(spec.paths as Record<string, Record<string, { security?: unknown[] }>>).flatMap(([p, item]) =>
      Object.entries(item)
        .filter(([m, op]) => METHODS.includes(m) && Array.isArray(op.security) && op.security.length === 0)
        .map(([m]) => `${m.toUpperCase()} ${p}`),
    );
    for (const op of ['POST /v1/auth/register', 'POST /v1/auth/login', 'GET /v1/health']) assert.ok(publicOps.includes(op), op);
  });
});
