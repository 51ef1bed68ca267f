import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { actionName } from '../src/platform/audit.ts';
import { manualClock } from '../src/platform/clock.ts';
import { sha256Hex } from '../src/platform/secrets.ts';
import { buildTestApp, type TestApp } from './support/app.ts';
import { createApiKey, signUp, type TestUser } from './support/fixtures.ts';
import { securitySuite } from './support/security.ts';

// The audit trail: one row per non-GET workspace request (platform/audit.ts) and per API-key use,
// read back through GET /v1/audit-log.

interface Row {
  id: string;
  actor: { type: string; id: string; name: string | null };
  action: string;
  method: string | null;
  route: string | null;
  resource_id: string | null;
  status_code: number | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  created_at: string;
}

describe('audit log', async () => {
  const clock = manualClock(new Date('2026-11-23T10:00:00.000Z'));
  const t = await buildTestApp({ clock });
  const as = (user: TestUser) => ({ token: user.accessToken, workspaceId: user.workspaceId });
  async function auditOf(user: TestUser, query = ''): Promise<Row[]> {
    const res = await t.request({ method: 'GET', url: `/v1/audit-log${query}`, ...as(user) });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  }

  it('records POST, PATCH and DELETE with actor, route, resource id, status and request metadata', async () => {
    const owner = await signUp(t);
    const ua = { 'user-agent': 'audit-test/1.0' };
    const created = await t.request({ method: 'POST', url: '/v1/api-keys', ...as(owner), headers: ua, payload: { name: 'ci', scope: 'write' } });
    assert.equal(created.statusCode, 201, created.body);
    const keyId = created.json().id;
    const renamed = await t.request({ method: 'PATCH', url: `/v1/api-keys/${keyId}`, ...as(owner), headers: ua, payload: { name: 'ci-2' } });
    assert.equal(renamed.statusCode, 200);
    const revoked = await t.request({ method: 'DELETE', url: `/v1/api-keys/${keyId}`, ...as(owner), headers: ua });
    assert.equal(revoked.statusCode, 204);

    const rows = await auditOf(owner);
    assert.equal(rows.length, 3, JSON.stringify(rows));
    const expected = [
      { action: 'api_keys.delete', method: 'DELETE', route: '/v1/api-keys/:id', status_code: 204, response: revoked },
      { action: 'api_keys.update', method: 'PATCH', route: '/v1/api-keys/:id', status_code: 200, response: renamed },
      { action: 'api_keys.create', method: 'POST', route: '/v1/api-keys', status_code: 201, response: created },
    ];
    rows.forEach((row, i) => {
      const { response, ...fields } = expected[i];
      assert.deepEqual(
        { action: row.action, method: row.method, route: row.route, status_code: row.status_code },
        fields,
        `row ${i} (newest first)`,
      );
      assert.deepEqual(row.actor, { type: 'user', id: owner.id, name: owner.email });
      assert.equal(row.resource_id, keyId);
      assert.equal(row.ip, '127.0.0.1');
      assert.equal(row.user_agent, 'audit-test/1.0');
      assert.equal(row.request_id, response.headers['x-request-id']);
      assert.match(row.id, /^aud_[0-9a-z]{26}$/);
      assert.equal(row.created_at, '2026-11-23T10:00:00.000Z');
    });
  });

  it('records refused writes with their status too', async () => {
    const owner = await signUp(t);
    const missing = await t.request({ method: 'PATCH', url: '/v1/api-keys/key_00000000000000000000000000', ...as(owner), payload: { name: 'x' } });
    assert.equal(missing.statusCode, 404);
    const invalid = await t.request({ method: 'POST', url: '/v1/api-keys', ...as(owner), payload: { name: 'x', scope: 'root' } });
    assert.equal(invalid.statusCode, 422);
    const rows = await auditOf(owner);
    assert.deepEqual(
      rows.map((r) => [r.action, r.status_code, r.resource_id]),
      [
        ['api_keys.create', 422, null],
        ['api_keys.update', 404, 'key_00000000000000000000000000'],
      ],
    );
  });

  it("records an API key's refused attempt at a user-only write in the key's workspace", async () => {
    const owner = await signUp(t);
    const key = await createApiKey(t, owner, 'admin', 'leaked');
    const minted = await t.request({ method: 'POST', url: '/v1/api-keys', token: key.key, payload: { name: 'minted', scope: 'admin' } });
    assert.equal(minted.statusCode, 403, minted.body);
    assert.equal(minted.json().code, 'forbidden');
    const rows = await t.platform.db
      .selectFrom('audit_log')
      .select(['actor_type', 'actor_id', 'action', 'status_code'])
      .where('workspace_id', '=', owner.workspaceId)
      .where('actor_type', '=', 'api_key')
      .where('action', '!=', 'api_key.used')
      .execute();
    assert.deepEqual(rows, [{ actor_type: 'api_key', actor_id: key.id, action: 'api_keys.create', status_code: 403 }]);
  });

  it('writes no row for GET requests', async () => {
    const owner = await signUp(t);
    const key = await createApiKey(t, owner, 'read-only');
    const count = async () =>
      Number((await t.platform.db.selectFrom('audit_log').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', owner.workspaceId).executeTakeFirstOrThrow()).n);
    const before = await count();
    assert.equal(before, 1, 'the key creation');
    for (const url of ['/v1/api-keys', `/v1/api-keys/${key.id}`, '/v1/audit-log']) {
      const res = await t.request({ method: 'GET', url, ...as(owner) });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    }
    assert.equal(await count(), before);
  });

  it('filters by actor_id, since and until, and pages newest first', async () => {
    const owner = await signUp(t);
    const admin = await createApiKey(t, owner, 'admin', 'auditor'); // 10:00, by the user
    clock.advance(10 * 60_000);
    const byKey = await t.request({ method: 'GET', url: '/v1/audit-log', token: admin.key }); // key use at 10:10
    assert.equal(byKey.statusCode, 200, byKey.body);
    await t.platform.keyUsage.flush();
    clock.advance(10 * 60_000);
    await createApiKey(t, owner, 'write', 'later'); // 10:20, by the user
    const t0 = clock.now();
    clock.set(new Date('2026-11-23T10:00:00.000Z'));

    const keyRows = await auditOf(owner, `?actor_id=${admin.id}`);
    assert.deepEqual(
      keyRows.map((r) => ({ action: r.action, actor: r.actor, method: r.method, route: r.route, status_code: r.status_code, resource_id: r.resource_id })),
      [{ action: 'api_key.used', actor: { type: 'api_key', id: admin.id, name: 'auditor' }, method: null, route: null, status_code: null, resource_id: admin.id }],
    );
    const userRows = await auditOf(owner, `?actor_id=${owner.id}`);
    assert.equal(userRows.length, 2);
    assert.ok(userRows.every((r) => r.actor.id === owner.id));

    const since = await auditOf(owner, '?since=2026-11-23T10:05:00.000Z');
    assert.deepEqual(since.map((r) => r.action), ['api_keys.create', 'api_key.used']);
    assert.ok(since.every((r) => r.created_at >= '2026-11-23T10:05:00.000Z'));
    const until = await auditOf(owner, '?until=2026-11-23T10:05:00.000Z');
    assert.deepEqual(until.map((r) => [r.action, r.created_at]), [['api_keys.create', '2026-11-23T10:00:00.000Z']]);
    const window = await auditOf(owner, `?since=2026-11-23T10:05:00.000Z&until=${encodeURIComponent(new Date(t0.getTime() - 1).toISOString())}`);
    assert.deepEqual(window.map((r) => r.action), ['api_key.used']);
    const both = await auditOf(owner, `?actor_id=${owner.id}&since=2026-11-23T10:05:00.000Z`);
    assert.deepEqual(both.map((r) => r.created_at), ['2026-11-23T10:20:00.000Z']);

    const page1 = await t.request({ method: 'GET', url: '/v1/audit-log?limit=2', ...as(owner) });
    assert.equal(page1.json().has_more, true);
    const page2 = await t.request({ method: 'GET', url: `/v1/audit-log?limit=2&cursor=${page1.json().next_cursor}`, ...as(owner) });
    assert.equal(page2.json().has_more, false);
    const ids = [...page1.json().data, ...page2.json().data].map((r: Row) => r.id);
    assert.equal(ids.length, 3);
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first across pages');
  });

  it('refuses bad filters with 422', async () => {
    const owner = await signUp(t);
    for (const [query, path] of [
      ['?since=yesterday', 'query.since'],
      ['?until=2026-13-45', 'query.until'],
      ['?since=2026-11-23T10:00:00Z&until=2026-11-23T09:00:00Z', 'query.until'],
      ['?limit=0', 'query.limit'],
      ['?cursor=bm9wZQ', 'query.cursor'],
    ]) {
      const res = await t.request({ method: 'GET', url: `/v1/audit-log${query}`, ...as(owner) });
      assert.equal(res.statusCode, 422, `${query}: ${res.body}`);
      assert.equal(res.json().errors[0].path, path, query);
    }
  });

  it("shows only the caller's workspace", async () => {
    const owner = await signUp(t);
    const stranger = await signUp(t);
    await createApiKey(t, stranger, 'write');
    await createApiKey(t, owner, 'write');
    const mine = await auditOf(owner);
    assert.equal(mine.length, 1);
    assert.equal(mine[0].actor.id, owner.id);
    const theirs = await auditOf(stranger);
    assert.equal(theirs.length, 1);
    assert.equal(theirs[0].actor.id, stranger.id);
  });

  it('stores nothing of bodies or secrets', async () => {
    const owner = await signUp(t);
    const marker = `body-marker-${Date.now()}`;
    const created = await t.request({ method: 'POST', url: '/v1/api-keys', ...as(owner), payload: { name: marker, scope: 'admin' } });
    const key = created.json().key as string;
    await t.request({ method: 'PATCH', url: `/v1/api-keys/${created.json().id}`, ...as(owner), payload: { name: `${marker}-2` } });
    await t.request({ method: 'GET', url: '/v1/audit-log', token: key });
    await t.platform.keyUsage.flush();
    const rows = await t.platform.db.selectFrom('audit_log').selectAll().where('workspace_id', '=', owner.workspaceId).execute();
    assert.equal(rows.length, 3, 'create, update, key use');
    const userRows = JSON.stringify(rows.filter((r) => r.actor_type === 'user'));
    assert.ok(!userRows.includes(marker), 'request bodies are not recorded');
    const everything = JSON.stringify(rows);
    for (const secret of [key, sha256Hex(key), owner.password, owner.accessToken, owner.refreshToken]) {
      assert.ok(!everything.includes(secret), 'no secret in the audit log');
    }
  });
});

describe('actionName (unit)', () => {
  it('names an action after the resource and the verb, with underscores', () => {
    const cases: Array<[string, string, string]> = [
      ['POST', '/v1/api-keys', 'api_keys.create'],
      ['PATCH', '/v1/api-keys/:id', 'api_keys.update'],
      ['DELETE', '/v1/api-keys/:id', 'api_keys.delete'],
      ['PUT', '/v1/webhooks', 'webhooks.update'],
      ['POST', '/v1/agents/:id/duplicate', 'agents.duplicate'],
      ['POST', '/v1/agents/:id/webhook-secret/rotate', 'agents.webhook_secret.rotate'],
      ['POST', '/v1/phone-numbers/buy', 'phone_numbers.buy'],
      ['DELETE', '/v1/knowledge-base/:id/sources/:src', 'knowledge_base.sources.delete'],
      ['PATCH', '/v1/workspaces/:id/members/:user_id', 'workspaces.members.update'],
    ];
    for (const [method, route, action] of cases) assert.equal(actionName(method, route), action, `${method} ${route}`);
  });
});

const shared: { app?: Promise<TestApp> } = {};
securitySuite('audit log', () => (shared.app ??= buildTestApp()), {
  'GET /v1/audit-log': {
    scope: 'admin',
    prepare: async (_t, owner) => ({ method: 'GET', url: '/v1/audit-log', headers: { authorization: `Bearer ${owner.accessToken}` } }),
  },
});
