import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import Fastify from 'fastify';
import { buildTestApp, type TestApp } from './support/app.ts';
import { createApiKey, signUp } from './support/fixtures.ts';
import { SANDBOX_NUMBERS } from '../src/providers/telephony/sandbox.ts';
import { type HostileRequest, type Operation, operationsOf, requestFor } from './support/hostile.ts';

// Property: no operation of the API answers a hostile request with a 5xx, or with an error that
// is not problem+json. The operations come from the app's own OpenAPI document, so a new route is
// covered without editing this file. Each operation gets a fresh tenant with one of each resource
// (agent, knowledge base, number, call, campaign, schedule, widget, voice session, payment...) whose
// real ids are mixed into the path parameters, its own resource's most often, so requests reach
// past the 404s into the services.
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
  const post = async (url: string, payload: Record<string, unknown>, method: 'POST' | 'PUT' = 'POST') => (await t.request({ ...as, method, url, payload })).json();
  const agent = await post('/v1/agents', { name: 'Fuzz', prompt: 'You answer questions.' });
  const kb = await post('/v1/knowledge-base', { name: 'Fuzz KB' });
  const source = await post(`/v1/knowledge-base/${kb.id}/sources`, { type: 'text', title: 'Hours', text: 'We open at nine.' });
  const invite = await post(`/v1/workspaces/${owner.workspaceId}/members`, { email: 'guest@example.com', role: 'member' });
  const sessions = (await t.request({ ...as, method: 'GET', url: '/v1/auth/sessions' })).json();
  // The resources of the calling half of the API, so its routes are reached with ids that exist.
  const available = (await t.request({ ...as, method: 'GET', url: '/v1/phone-numbers/available?country=US' })).json();
  const number = await post('/v1/phone-numbers/buy', { number: available.data?.[0]?.number, agent_id: agent.id });
  const call = await post('/v1/calls/outbound', { agent_id: agent.id, to: SANDBOX_NUMBERS.busy });
  const campaign = await post('/v1/campaigns', { name: 'Fuzz campaign', agent_id: agent.id });
  const schedule = await post('/v1/schedules', { agent_id: agent.id, to: '+15550100199', scheduled_at: new Date(Date.now() + 86_400_000).toISOString() });
  const widget = await post('/v1/widgets', { agent_id: agent.id, name: 'Fuzz widget', allowed_origins: ['https://example.com'] });
  const voice = await post('/v1/voice/sessions', { agent_id: agent.id, external_user_id: 'fuzz-user' });
  const payment = await post('/v1/payments/topup', { amount_usd: 10, payment_method: 'pm_card_visa' });
  const branding = await post('/v1/branding', { domain: `fuzz-${owner.workspaceId.slice(-8).toLowerCase()}.example.com`, name: 'Fuzz' }, 'PUT');
  await post('/v1/dnc', { number: '+15550100188' });
  const created = { number: number.id, call: call.id, campaign: campaign.id, schedule: schedule.id, widget: widget.id, voice: voice.id, payment: payment.id, branding: branding.domain };
  for (const [resource, id] of Object.entries(created)) assert.equal(typeof id, 'string', `the fuzz tenant's ${resource} was created`);
  const byResource: Record<string, unknown[]> = {
    workspaces: [owner.workspaceId, invite.id],
    'api-keys': [key.id],
    auth: [sessions.data?.[0]?.id],
    agents: [agent.id],
    'knowledge-base': [kb.id, source.id],
    'phone-numbers': [number.id],
    calls: [call.id],
    analytics: [agent.id],
    campaigns: [campaign.id],
    schedules: [schedule.id],
    widgets: [widget.id],
    voice: [voice.id],
    payments: [payment.id],
    branding: [branding.domain],
    dnc: ['+15550100188'],
    voices: ['builtin-ava'],
  };
  const ids = Object.values(byResource)
    .flat()
    .filter((id): id is string => typeof id === 'string');
  /** The ids to mix into `path`: every id, and those of its own resource three times as often. */
  const idsFor = (path: string) => {
    const own = (byResource[path.split('/')[2]] ?? []).filter((id): id is string => typeof id === 'string');
    return [...own, ...own, ...own, ...ids];
  };
  return { owner, ids, idsFor };
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
      const { owner, idsFor } = await tenantIds(t);
      await fc.assert(
        fc.asyncProperty(requestFor(op, spec.components.schemas, idsFor(op.path)), async (request: HostileRequest) => {
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
