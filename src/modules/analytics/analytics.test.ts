import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { newId } from '../../platform/ids.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';

// Analytics over call rows of known figures (written straight into the table, as the dialer would).

const t = await buildTestApp();

async function call(user: TestUser, agentId: string, status: string, createdAt: string, durationMs: number | null, costMicros: number) {
  const at = new Date(createdAt);
  await t.platform.db
    .insertInto('calls')
    .values({
      id: newId('call'),
      workspace_id: user.workspaceId,
      agent_id: agentId,
      direction: 'outbound',
      from_number: '+15550100001',
      to_number: '+15550100200',
      status: status as 'completed',
      provider: 'sandbox',
      answered_at: durationMs === null ? null : at,
      duration_ms: durationMs,
      cost_micros: costMicros,
      transcript: '[]',
      extracted: '{}',
      variables: '{}',
      metadata: '{}',
      created_at: at,
      updated_at: at,
    })
    .execute();
}

describe('analytics', () => {
  it('overview, per agent and by day, with exact figures; other workspaces and ranges excluded', async () => {
    const user = await signUp(t);
    const a = await createCallAgent(t, user);
    const b = await createCallAgent(t, user);
    await call(user, a.id, 'completed', '2026-11-20T10:00:00.000Z', 60_000, 90_000);
    await call(user, a.id, 'transferred', '2026-11-20T23:59:59.000Z', 30_000, 45_000);
    await call(user, b.id, 'busy', '2026-11-22T08:00:00.000Z', null, 0);
    await call(user, b.id, 'completed', '2026-11-22T09:00:00.000Z', 90_000, 135_000);
    await call(user, a.id, 'completed', '2026-10-01T09:00:00.000Z', 60_000, 90_000);
    const other = await signUp(t);
    await call(other, (await createCallAgent(t, other)).id, 'completed', '2026-11-20T10:00:00.000Z', 60_000, 90_000);

    const range = 'from=2026-11-20T00:00:00.000Z&to=2026-11-23T00:00:00.000Z';
    const overview = (await t.request({ method: 'GET', url: `/v1/analytics/overview?${range}`, ...as(user) })).json();
    assert.deepEqual(overview, {
      from: '2026-11-20T00:00:00.000Z',
      to: '2026-11-23T00:00:00.000Z',
      total_calls: 4,
      by_status: { completed: 2, transferred: 1, busy: 1 },
      minutes: 3,
      cost_usd: 0.27,
      avg_duration_ms: 60_000,
      transfer_rate: 0.3333,
    });
    const perAgent = (await t.request({ method: 'GET', url: `/v1/analytics/agents/${a.id}?${range}`, ...as(user) })).json();
    assert.equal(perAgent.total_calls, 2);
    assert.equal(perAgent.transfer_rate, 0.5);
    assert.equal(perAgent.minutes, 1.5);
    const series = (await t.request({ method: 'GET', url: `/v1/analytics/calls?${range}`, ...as(user) })).json();
    assert.deepEqual(series.data, [
      { date: '2026-11-20', count: 2, minutes: 1.5, cost_usd: 0.135 },
      { date: '2026-11-21', count: 0, minutes: 0, cost_usd: 0 },
      { date: '2026-11-22', count: 2, minutes: 1.5, cost_usd: 0.135 },
    ]);
    const backwards = await t.request({ method: 'GET', url: '/v1/analytics/overview?from=2026-11-23T00:00:00.000Z&to=2026-11-20T00:00:00.000Z', ...as(user) });
    assert.equal(backwards.statusCode, 422);
    const tooLong = await t.request({ method: 'GET', url: '/v1/analytics/calls?from=2024-01-01T00:00:00.000Z&to=2026-01-01T00:00:00.000Z', ...as(user) });
    assert.equal(tooLong.statusCode, 422);
    const defaults = (await t.request({ method: 'GET', url: '/v1/analytics/calls', ...as(user) })).json();
    assert.ok(defaults.data.length >= 30 && defaults.data.length <= 31);
  });
});

securitySuite('analytics', async () => t, {
  'GET /v1/analytics/overview': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/analytics/overview' }) },
  'GET /v1/analytics/calls': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/analytics/calls' }) },
  'GET /v1/analytics/agents/{id}': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/analytics/agents/${(await createCallAgent(app, owner)).id}` }) },
});
