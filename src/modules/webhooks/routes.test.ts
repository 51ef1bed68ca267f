import assert from 'node:assert/strict';
import dns from 'node:dns';
import { describe, it, mock } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { createApiKey, signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { EVENT_TYPE_NAMES } from '../../platform/outbox/catalog.ts';
import type { DeliveryStatus } from './tables.ts';

// The tenant webhook API (12 operations): happy paths read back from the database, 422s,
// and the shared security suite.

const HOOK = 'http://127.0.0.1:9/hook';

async function putWebhook(t: TestApp, user: TestUser, payload: Record<string, unknown> = { webhook_url: HOOK }) {
  const res = await t.request({ method: 'PUT', url: '/v1/webhooks', token: user.accessToken, payload });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

/** A delivery of the user's workspace (a webhook.test to the tenant webhook), optionally moved to a status. */
async function makeDelivery(t: TestApp, user: TestUser, status?: DeliveryStatus): Promise<string> {
  const existing = await t.platform.db.selectFrom('webhook_endpoints').select('workspace_id').where('workspace_id', '=', user.workspaceId).executeTakeFirst();
  if (!existing) await putWebhook(t, user);
  const res = await t.request({ method: 'POST', url: '/v1/webhooks/test', token: user.accessToken, payload: {} });
  assert.equal(res.statusCode, 202, res.body);
  const id: string = res.json().delivery_ids[0];
  if (status) {
    await t.platform.db
      .updateTable('webhook_deliveries')
      .set({ status, attempt_count: 3, next_attempt_at: status === 'pending' ? new Date() : null, last_status_code: 500 })
      .where('id', '=', id)
      .execute();
  }
  return id;
}

describe('tenant webhook API', async () => {
  const t = await buildTestApp();

  it('PUT creates the webhook with a whsec_ secret and default events; a second PUT keeps the secret; GET never shows it', async () => {
    const user = await signUp(t);
    const created = await putWebhook(t, user);
    assert.match(created.webhook_secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.equal(Buffer.from(created.webhook_secret.slice(6), 'base64').length, 24);
    assert.deepEqual(created.events, ['campaign.completed', 'payment.succeeded', 'voice_session.ended', 'wallet.low_balance']);
    const row = await t.platform.db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', user.workspaceId).executeTakeFirstOrThrow();
    assert.equal(row.url, HOOK);
    assert.equal(row.secret, created.webhook_secret);

    const updated = await putWebhook(t, user, { webhook_url: 'http://127.0.0.1:9/other', events: ['call.ended', 'wallet.low_balance'] });
    assert.equal(updated.webhook_secret, created.webhook_secret);
    assert.deepEqual(updated.events, ['call.ended', 'wallet.low_balance']);

    const key = await createApiKey(t, user, 'read-only');
    const got = await t.request({ method: 'GET', url: '/v1/webhooks', token: key.key });
    assert.equal(got.statusCode, 200, got.body);
    assert.deepEqual(Object.keys(got.json()).sort(), ['created_at', 'events', 'updated_at', 'webhook_url']);
    assert.equal(got.json().webhook_url, 'http://127.0.0.1:9/other');
  });

  it('PUT answers 422 naming the field for a missing URL, a non-http URL, an unknown event, an unknown field', async () => {
    const user = await signUp(t);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'webhook_url'],
      [{ webhook_url: 'ftp://example.com/x' }, 'webhook_url'],
      [{ webhook_url: 'not a url' }, 'webhook_url'],
      [{ webhook_url: HOOK, events: ['call.exploded'] }, 'events.0'],
      [{ webhook_url: HOOK, events: ['webhook.test'] }, 'events.0'],
      [{ webhook_url: HOOK, events: [] }, 'events'],
      [{ webhook_url: HOOK, secret: 'whsec_mine' }, 'secret'],
    ];
    for (const [payload, path] of cases) {
      const res = await t.request({ method: 'PUT', url: '/v1/webhooks', token: user.accessToken, payload });
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)} → ${res.body}`);
      assert.equal(res.json().code, 'validation_failed');
      assert.ok(
        res.json().errors.some((e: { path: string }) => e.path === path || e.path.startsWith(path)),
        `${JSON.stringify(payload)}: expected an error at ${path}, got ${res.body}`,
      );
    }
  });

  it('GET and DELETE answer 404 when no webhook is set; DELETE removes it and fails its pending deliveries', async () => {
    const user = await signUp(t);
    const none = await t.request({ method: 'GET', url: '/v1/webhooks', token: user.accessToken });
    assert.equal(none.statusCode, 404, none.body);
    assert.equal(none.json().code, 'not_found');
    const id = await makeDelivery(t, user);
    const del = await t.request({ method: 'DELETE', url: '/v1/webhooks', token: user.accessToken });
    assert.equal(del.statusCode, 204, del.body);
    assert.equal((await t.request({ method: 'GET', url: '/v1/webhooks', token: user.accessToken })).statusCode, 404);
    assert.equal((await t.request({ method: 'DELETE', url: '/v1/webhooks', token: user.accessToken })).statusCode, 404);
    const row = await t.platform.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'failed');
    assert.equal(row.last_error, 'the tenant webhook was deleted');
  });

  it('rotate-secret gives a new secret and keeps the old one valid for 24 h; 404 without a webhook', async () => {
    const user = await signUp(t);
    const missing = await t.request({ method: 'POST', url: '/v1/webhooks/rotate-secret', token: user.accessToken, payload: {} });
    assert.equal(missing.statusCode, 404, missing.body);
    const created = await putWebhook(t, user);
    const res = await t.request({ method: 'POST', url: '/v1/webhooks/rotate-secret', token: user.accessToken, payload: {} });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.notEqual(body.webhook_secret, created.webhook_secret);
    const expires = new Date(body.previous_secret_expires_at).getTime() - Date.now();
    assert.ok(expires > 23.9 * 3600e3 && expires <= 24 * 3600e3, `expires in ${expires} ms`);
    const row = await t.platform.db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', user.workspaceId).executeTakeFirstOrThrow();
    assert.equal(row.previous_secret, created.webhook_secret);
    assert.equal(row.secret, body.webhook_secret);
    const bad = await t.request({ method: 'POST', url: '/v1/webhooks/rotate-secret', token: user.accessToken, payload: { secret: 'x' } });
    assert.equal(bad.statusCode, 422, bad.body);
  });

  it('test emits webhook.test through the engine (a delivery row), 404 without a webhook', async () => {
    const user = await signUp(t);
    const missing = await t.request({ method: 'POST', url: '/v1/webhooks/test', token: user.accessToken, payload: {} });
    assert.equal(missing.statusCode, 404, missing.body);
    await putWebhook(t, user);
    const res = await t.request({ method: 'POST', url: '/v1/webhooks/test', token: user.accessToken, payload: {} });
    assert.equal(res.statusCode, 202, res.body);
    const { event_id, delivery_ids } = res.json();
    assert.match(event_id, /^evt_[0-9a-z]{26}$/);
    assert.equal(delivery_ids.length, 1);
    const row = await t.platform.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', delivery_ids[0]).executeTakeFirstOrThrow();
    assert.deepEqual([row.event_type, row.destination, row.status, row.event_id], ['webhook.test', 'tenant', 'pending', event_id]);
  });

  it('event-types lists every event with its listing and a complete example', async () => {
    const user = await signUp(t);
    const res = await t.request({ method: 'GET', url: '/v1/webhooks/event-types', token: user.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data as Array<{ type: string; listing: string; example: Record<string, unknown>; destinations: string[] }>;
    assert.deepEqual(data.map((d) => d.type), EVENT_TYPE_NAMES);
    const ended = data.find((d) => d.type === 'call.ended');
    assert.deepEqual(Object.keys(ended?.example ?? {}), ['type', 'call_id', 'agent_id', 'timestamp', 'data', 'event_id']);
    const completed = data.find((d) => d.type === 'call.completed');
    assert.deepEqual(Object.keys(completed?.example ?? {}), ['event', 'id', 'ts', 'data']);
    const low = data.find((d) => d.type === 'wallet.low_balance');
    assert.deepEqual(Object.keys(low?.example ?? {}), ['event', 'timestamp', 'data', 'id']);
    assert.deepEqual(low?.destinations, ['tenant']);
  });

  it('lists deliveries of the workspace newest first, with filters and a cursor; 422 for a bad filter', async () => {
    const user = await signUp(t);
    const first = await makeDelivery(t, user, 'dead');
    const second = await makeDelivery(t, user);
    const third = await makeDelivery(t, user, 'succeeded');
    const all = await t.request({ method: 'GET', url: '/v1/webhooks/deliveries', token: user.accessToken });
    assert.equal(all.statusCode, 200, all.body);
    assert.deepEqual(all.json().data.map((d: { id: string }) => d.id), [third, second, first]);
    const page1 = await t.request({ method: 'GET', url: '/v1/webhooks/deliveries?limit=2', token: user.accessToken });
    assert.equal(page1.json().has_more, true);
    const page2 = await t.request({ method: 'GET', url: `/v1/webhooks/deliveries?limit=2&cursor=${page1.json().next_cursor}`, token: user.accessToken });
    assert.deepEqual(page2.json().data.map((d: { id: string }) => d.id), [first]);
    assert.equal(page2.json().has_more, false);
    const dead = await t.request({ method: 'GET', url: '/v1/webhooks/deliveries?status=dead&event_type=webhook.test&destination=tenant', token: user.accessToken });
    assert.deepEqual(dead.json().data.map((d: { id: string }) => d.id), [first]);
    const agentOnly = await t.request({ method: 'GET', url: '/v1/webhooks/deliveries?destination=agent', token: user.accessToken });
    assert.deepEqual(agentOnly.json().data, []);
    for (const query of ['status=lost', 'destination=moon', 'limit=0', 'limit=101', 'event_type=x.y', 'cursor=garbage']) {
      const res = await t.request({ method: 'GET', url: `/v1/webhooks/deliveries?${query}`, token: user.accessToken });
      assert.equal(res.statusCode, 422, `${query}: ${res.body}`);
    }
  });

  it('shows one delivery with its payload and attempts; 404 for an unknown id', async () => {
    const user = await signUp(t);
    const id = await makeDelivery(t, user);
    const res = await t.request({ method: 'GET', url: `/v1/webhooks/deliveries/${id}`, token: user.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.id, id);
    assert.equal(body.payload.event, 'webhook.test');
    assert.equal(body.payload.id, body.event_id);
    assert.deepEqual(body.attempts, []);
    const unknown = await t.request({ method: 'GET', url: '/v1/webhooks/deliveries/dlv_00000000000000000000000000', token: user.accessToken });
    assert.equal(unknown.statusCode, 404, unknown.body);
  });

  it('retry adds one manual attempt due now to a finished delivery; 409 while one is already due', async () => {
    const user = await signUp(t);
    const pending = await makeDelivery(t, user);
    const conflict = await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${pending}/retry`, token: user.accessToken, payload: {} });
    assert.equal(conflict.statusCode, 409, conflict.body);
    assert.equal(conflict.json().code, 'invalid_state');
    const done = await makeDelivery(t, user, 'succeeded');
    const res = await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${done}/retry`, token: user.accessToken, payload: {} });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().status, 'pending');
    assert.equal(res.json().max_attempts, 4, 'one attempt more than made, the schedule is not restarted');
    const row = await t.platform.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', done).executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.next_trigger, row.attempt_count, row.max_attempts], ['pending', 'manual', 3, 4]);
    const unknown = await t.request({ method: 'POST', url: '/v1/webhooks/deliveries/dlv_x/retry', token: user.accessToken, payload: {} });
    assert.equal(unknown.statusCode, 404, unknown.body);
  });

  it('lists failed and dead deliveries only, and replays one of them; 409 for a delivery that has not failed', async () => {
    const user = await signUp(t);
    const failed = await makeDelivery(t, user, 'failed');
    const dead = await makeDelivery(t, user, 'dead');
    const ok = await makeDelivery(t, user, 'succeeded');
    const list = await t.request({ method: 'GET', url: '/v1/webhooks/failed', token: user.accessToken });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(list.json().data.map((d: { id: string }) => d.id), [dead, failed]);
    const filtered = await t.request({ method: 'GET', url: '/v1/webhooks/failed?event_type=call.ended', token: user.accessToken });
    assert.deepEqual(filtered.json().data, []);
    const notFailed = await t.request({ method: 'POST', url: `/v1/webhooks/failed/${ok}/replay`, token: user.accessToken, payload: {} });
    assert.equal(notFailed.statusCode, 409, notFailed.body);
    const res = await t.request({ method: 'POST', url: `/v1/webhooks/failed/${dead}/replay`, token: user.accessToken, payload: {} });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().id, dead);
    assert.equal(res.json().status, 'pending');
    const after = await t.request({ method: 'GET', url: '/v1/webhooks/failed', token: user.accessToken });
    assert.deepEqual(after.json().data.map((d: { id: string }) => d.id), [failed]);
  });

  it('replays failed deliveries in bulk with filters and answers {replayed}; 422 for bad bounds', async () => {
    const user = await signUp(t);
    const before = new Date(Date.now() - 1000).toISOString();
    await makeDelivery(t, user, 'failed');
    await makeDelivery(t, user, 'dead');
    await makeDelivery(t, user, 'succeeded');
    const none = await t.request({ method: 'POST', url: '/v1/webhooks/failed/replay', token: user.accessToken, payload: { event_type: 'call.ended' } });
    assert.equal(none.statusCode, 202, none.body);
    assert.deepEqual(none.json(), { replayed: 0 });
    const past = await t.request({ method: 'POST', url: '/v1/webhooks/failed/replay', token: user.accessToken, payload: { until: before } });
    assert.deepEqual(past.json(), { replayed: 0 });
    const res = await t.request({
      method: 'POST',
      url: '/v1/webhooks/failed/replay',
      token: user.accessToken,
      payload: { event_type: 'webhook.test', since: before, until: new Date(Date.now() + 60_000).toISOString() },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json(), { replayed: 2 });
    const pending = await t.platform.db.selectFrom('webhook_deliveries').select('id').where('workspace_id', '=', user.workspaceId).where('status', '=', 'pending').execute();
    assert.equal(pending.length, 2);
    for (const payload of [{ since: 'yesterday' }, { since: new Date().toISOString(), until: before }, { everything: true }, { event_type: 'nope' }]) {
      const bad = await t.request({ method: 'POST', url: '/v1/webhooks/failed/replay', token: user.accessToken, payload });
      assert.equal(bad.statusCode, 422, `${JSON.stringify(payload)}: ${bad.body}`);
      assert.equal(bad.json().code, 'validation_failed');
    }
  });

  it("lists only the caller's workspace deliveries", async () => {
    const owner = await signUp(t);
    const stranger = await signUp(t);
    await makeDelivery(t, owner, 'dead');
    for (const url of ['/v1/webhooks/deliveries', '/v1/webhooks/failed']) {
      const res = await t.request({ method: 'GET', url, token: stranger.accessToken });
      assert.deepEqual(res.json().data, [], url);
    }
    const replay = await t.request({ method: 'POST', url: '/v1/webhooks/failed/replay', token: stranger.accessToken, payload: {} });
    assert.deepEqual(replay.json(), { replayed: 0 });
  });
});

describe('tenant webhook API: SSRF guard', async () => {
  const t = await buildTestApp({ env: { ALLOW_PRIVATE_URLS: 'false' } });

  it('refuses private, loopback, link-local and metadata URLs with 422 naming webhook_url', async () => {
    const user = await signUp(t);
    for (const url of ['http://127.0.0.1:8080/hook', 'http://10.0.0.5/x', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x', 'http://localhost/x']) {
      const res = await t.request({ method: 'PUT', url: '/v1/webhooks', token: user.accessToken, payload: { webhook_url: url } });
      assert.equal(res.statusCode, 422, `${url}: ${res.body}`);
      assert.equal(res.json().code, 'validation_failed');
      assert.equal(res.json().errors[0].path, 'webhook_url');
    }
  });

  it('refuses a host whose DNS answers mix a public and a private address, in either order', async () => {
    const user = await signUp(t);
    for (const answers of [['93.184.216.34', '10.0.0.5'], ['10.0.0.5', '93.184.216.34'], ['2606:4700:4700::1111', '::1']]) {
      const lookup = mock.method(dns.promises, 'lookup', async () => answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
      try {
        const res = await t.request({ method: 'PUT', url: '/v1/webhooks', token: user.accessToken, payload: { webhook_url: 'https://hooks.example.com/in' } });
        assert.equal(res.statusCode, 422, `${answers}: ${res.body}`);
        assert.equal(res.json().errors[0].path, 'webhook_url');
        assert.match(res.json().errors[0].message, /10\.0\.0\.5|::1/);
        assert.ok(lookup.mock.callCount() > 0, 'the host was resolved');
      } finally {
        lookup.mock.restore();
      }
    }
    const saved = await t.request({ method: 'GET', url: '/v1/webhooks', token: user.accessToken });
    assert.equal(saved.statusCode, 404, 'nothing was saved');
    // The same host with public answers only is accepted: the refusal was the private answer.
    const lookup = mock.method(dns.promises, 'lookup', async () => [{ address: '93.184.216.34', family: 4 }]);
    try {
      const res = await t.request({ method: 'PUT', url: '/v1/webhooks', token: user.accessToken, payload: { webhook_url: 'https://hooks.example.com/in' } });
      assert.equal(res.statusCode, 200, res.body);
    } finally {
      lookup.mock.restore();
    }
  });
});

describe('tenant webhook API security', async () => {
  const app = buildTestApp();
  const getApp = () => app;
  const withHook = async (t: TestApp, owner: TestUser) => {
    await putWebhook(t, owner);
  };
  securitySuite('webhooks', getApp, {
    'PUT /v1/webhooks': { scope: 'write', prepare: async (_t, owner) => ({ method: 'PUT', url: '/v1/webhooks', headers: { 'x-workspace-id': owner.workspaceId }, payload: { webhook_url: HOOK } }) },
    'GET /v1/webhooks': {
      scope: 'read-only',
      ownedResource: true,
      prepare: async (t, owner) => {
        await withHook(t, owner);
        return { method: 'GET', url: '/v1/webhooks' };
      },
    },
    'DELETE /v1/webhooks': {
      scope: 'write',
      ownedResource: true,
      prepare: async (t, owner) => {
        await withHook(t, owner);
        return { method: 'DELETE', url: '/v1/webhooks' };
      },
    },
    'POST /v1/webhooks/rotate-secret': {
      scope: 'write',
      ownedResource: true,
      prepare: async (t, owner) => {
        await withHook(t, owner);
        return { method: 'POST', url: '/v1/webhooks/rotate-secret', payload: {} };
      },
    },
    'POST /v1/webhooks/test': {
      scope: 'write',
      ownedResource: true,
      prepare: async (t, owner) => {
        await withHook(t, owner);
        return { method: 'POST', url: '/v1/webhooks/test', payload: {} };
      },
    },
    'GET /v1/webhooks/event-types': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/webhooks/event-types' }) },
    'GET /v1/webhooks/deliveries': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/webhooks/deliveries' }) },
    'GET /v1/webhooks/deliveries/{id}': {
      scope: 'read-only',
      ownedResource: true,
      prepare: async (t, owner) => ({ method: 'GET', url: `/v1/webhooks/deliveries/${await makeDelivery(t, owner)}` }),
    },
    'POST /v1/webhooks/deliveries/{id}/retry': {
      scope: 'write',
      ownedResource: true,
      prepare: async (t, owner) => ({ method: 'POST', url: `/v1/webhooks/deliveries/${await makeDelivery(t, owner, 'failed')}/retry`, payload: {} }),
    },
    'GET /v1/webhooks/failed': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/webhooks/failed' }) },
    'POST /v1/webhooks/failed/{id}/replay': {
      scope: 'write',
      ownedResource: true,
      prepare: async (t, owner) => ({ method: 'POST', url: `/v1/webhooks/failed/${await makeDelivery(t, owner, 'dead')}/replay`, payload: {} }),
    },
    'POST /v1/webhooks/failed/replay': { scope: 'write', prepare: async () => ({ method: 'POST', url: '/v1/webhooks/failed/replay', payload: {} }) },
  });
});
