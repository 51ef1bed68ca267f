import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';

const t = await buildTestApp();

describe('do-not-call list', () => {
  it('adds (normalised, idempotent), lists newest first, refuses outbound calls to listed numbers, removes', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const first = await t.request({ method: 'POST', url: '/v1/dnc', ...as(user), payload: { number: '+1 (555) 010-0301', reason: 'asked not to be called' } });
    assert.equal(first.statusCode, 201, first.body);
    assert.deepEqual({ number: first.json().number, reason: first.json().reason }, { number: '+15550100301', reason: 'asked not to be called' });
    const again = await t.request({ method: 'POST', url: '/v1/dnc', ...as(user), payload: { number: '+15550100301' } });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().reason, 'asked not to be called');
    assert.equal((await t.request({ method: 'POST', url: '/v1/dnc', ...as(user), payload: { number: '+15550100302' } })).statusCode, 201);
    const bad = await t.request({ method: 'POST', url: '/v1/dnc', ...as(user), payload: { number: 'not a number' } });
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().errors[0].path, 'number');

    const page = (await t.request({ method: 'GET', url: '/v1/dnc?limit=1', ...as(user) })).json();
    assert.deepEqual(page.data.map((e: { number: string }) => e.number), ['+15550100302']);
    const rest = (await t.request({ method: 'GET', url: `/v1/dnc?limit=1&cursor=${page.next_cursor}`, ...as(user) })).json();
    assert.deepEqual(rest.data.map((e: { number: string }) => e.number), ['+15550100301']);
    assert.equal(rest.has_more, false);

    const refused = await t.request({ method: 'POST', url: '/v1/calls/outbound', ...as(user), payload: { agent_id: agent.id, to: '+15550100301' } });
    assert.equal(refused.statusCode, 422);
    assert.equal(refused.json().code, 'do_not_call');
    const stranger = await signUp(t);
    assert.equal((await t.request({ method: 'GET', url: '/v1/dnc', ...as(stranger) })).json().data.length, 0);
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/dnc/${encodeURIComponent('+15550100301')}`, ...as(stranger) })).statusCode, 404);

    assert.equal((await t.request({ method: 'DELETE', url: `/v1/dnc/${encodeURIComponent('+15550100301')}`, ...as(user) })).statusCode, 204);
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/dnc/${encodeURIComponent('+15550100301')}`, ...as(user) })).statusCode, 404);
    const allowed = await t.request({ method: 'POST', url: '/v1/calls/outbound', ...as(user), payload: { agent_id: agent.id, to: '+15550100301' } });
    assert.equal(allowed.statusCode, 201);
  });
});

securitySuite('do-not-call', async () => t, {
  'GET /v1/dnc': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/dnc' }) },
  'POST /v1/dnc': { scope: 'write', prepare: async () => ({ method: 'POST', url: '/v1/dnc', payload: { number: '+15550100399' } }) },
  'DELETE /v1/dnc/{number}': {
    scope: 'write',
    ownedResource: true,
    prepare: async (app, owner) => {
      const res = await app.request({ method: 'POST', url: '/v1/dnc', ...as(owner), payload: { number: '+15550100398' } });
      assert.ok(res.statusCode < 300, res.body);
      return { method: 'DELETE', url: `/v1/dnc/${encodeURIComponent('+15550100398')}` };
    },
  },
});
