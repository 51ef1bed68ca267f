import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import Fastify from 'fastify';
import { buildTestApp, type TestApp } from './support/app.ts';
import { createApiKey, signUp } from './support/fixtures.ts';
import { type HostileRequest, type Operation, operationsOf, requestFor } from './support/hostile.ts';

// Property: no operation of the API answers a hostile request with a 5xx, or with an error that
// is not problem+json. The operations come from the app's own OpenAPI document, so a new route is
// covered without editing this file. Each operation gets a fresh tenant whose real ids are mixed
// into the path parameters, so requests reach past the 404s into the services.
// HOSTILE_RUNS sets the runs per operation (CI: the default); HOSTILE_SEED replays a failure.

const RUNS = Number(process.env.HOSTILE_RUNS ?? 20);
const SEED = process.env.HOSTILE_SEED ? Number(process.env.HOSTILE_SEED) : undefined;

interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** What is wrong with an answer, or undefined. */
export function faultOf(res: Answer): string | undefined {
  if (res.statusCode >= 500) return `status ${res.statusCode}: ${res.body.slice(0, 300)}`;
  if (res.statusCode < 400) return undefined;
  if (!String(res.headers['content-type'] ?? '').startsWith('application/problem+json')) {
    return `error ${res.statusCode} is not problem+json: ${String(res.headers['content-type'])} ${res.body.slice(0, 200)}`;
  }
  let problem: { status?: unknown; code?: unknown; errors?: unknown[] };
  try {
    problem = JSON.parse(res.body);
  } catch {
    return `error ${res.statusCode} body is not JSON`;
  }
  if (problem.status !== res.statusCode || typeof problem.code !== 'string') return `malformed problem: ${res.body.slice(0, 200)}`;
  if (res.body.length > 20_000) return `error body of ${res.body.length} bytes`;
  if (Array.isArray(problem.errors) && problem.errors.length > 20) return `${problem.errors.length} entries in errors`;
  return undefined;
}

async function tenantIds(t: TestApp) {
  const owner = await signUp(t);
  const key = await createApiKey(t, owner, 'admin');
  const as = { token: owner.accessToken, workspaceId: owner.workspaceId };
  const agent = await t.request({ ...as, method: 'POST', url: '/v1/agents', payload: { name: 'Fuzz', prompt: 'You answer questions.' } });
  const kb = await t.request({ ...as, method: 'POST', url: '/v1/knowledge-base', payload: { name: 'Fuzz KB' } });
  const source = await t.request({ ...as, method: 'POST', url: `/v1/knowledge-base/${kb.json().id}/sources`, payload: { type: 'text', title: 'Hours', text: 'We open at nine.' } });
  const invite = await t.request({ ...as, method: 'POST', url: `/v1/workspaces/${owner.workspaceId}/members`, payload: { email: 'guest@example.com', role: 'member' } });
  const sessions = await t.request({ ...as, method: 'GET', url: '/v1/auth/sessions' });
  const ids = [owner.id, owner.workspaceId, key.id, agent.json().id, kb.json().id, source.json().id, invite.json().id, sessions.json().data?.[0]?.id, 'builtin-ava']
    .filter((id): id is string => typeof id === 'string');
  return { owner, ids };
}

describe('hostile input on every operation', async () => {
  const t = await buildTestApp({ env: { ALLOW_PRIVATE_URLS: 'false' } });
  const spec = t.app.swagger() as unknown as { paths: Record<string, Record<string, Record<string, unknown>>>; components: { schemas: Record<string, Record<string, unknown>> } };
  const operations = operationsOf(spec);

  it('finds the operations in the OpenAPI document', () => {
    assert.ok(operations.length >= 69, `${operations.length} operations`);
  });

  for (const op of operations) {
    it(`${op.method} ${op.path}: no 5xx, every error problem+json`, async () => {
      const { owner, ids } = await tenantIds(t);
      await fc.assert(
        fc.asyncProperty(requestFor(op, spec.components.schemas, ids), async (request: HostileRequest) => {
          const res = await t.request({
            method: op.method as 'GET',
            url: request.url,
            payload: request.payload,
            token: owner.accessToken,
            workspaceId: owner.workspaceId,
            headers: request.headers,
          });
          const fault = faultOf(res);
          assert.equal(fault, undefined, `${op.method} ${request.url.slice(0, 200)} → ${fault}`);
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    });
  }
});

describe('the hostile-input property', () => {
  it('catches a route that fails on NUL and one that answers errors as plain JSON', async () => {
    const app = Fastify({ logger: false });
    // Errors as problem+json (so the first fault found is the one planted), whatever their status.
    app.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
      const status = error.statusCode ?? 500;
      return reply.code(status).type('application/problem+json').send({ status, code: status === 500 ? 'internal' : 'bad_request' });
    });
    app.post('/v1/things', async (request) => {
      if (JSON.stringify(request.body).includes('\\u0000')) throw new Error('database refused NUL');
      return { ok: true };
    });
    app.get('/v1/things/:id', async (_request, reply) => reply.code(404).send({ error: 'not found' }));
    await app.ready();
    const op = (method: string, path: string): Operation => ({ method, path, operationId: 'x', queryParams: [], jsonBody: { type: 'object', properties: { name: { type: 'string' } } }, multipart: false });
    for (const [operation, expected] of [
      [op('POST', '/v1/things'), /status 500/],
      [op('GET', '/v1/things/{id}'), /not problem\+json/],
    ] as const) {
      const outcome = await fc.check(
        fc.asyncProperty(requestFor(operation, {}, ['thing_1']), async (request) => {
          const res = await app.inject({ method: operation.method as 'GET', url: request.url, payload: request.payload, headers: request.headers });
          assert.equal(faultOf(res), undefined);
        }),
        { numRuns: 300, seed: 42 },
      );
      assert.equal(outcome.failed, true, `${operation.method} ${operation.path} fault found`);
      assert.match(String((outcome.errorInstance as Error)?.message), expected);
    }
    await app.close();
  });
});
