import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { addMember } from '../src/modules/invitations/testing.ts';
import { actionName, storableText } from '../src/platform/audit.ts';
import { manualClock } from '../src/platform/clock.ts';
import { enforceRouteConventions } from '../src/platform/http/openapi.ts';
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

  it('records writes refused for their scope (403 insufficient_scope): a read-only key and a viewer', async () => {
    const owner = await signUp(t);
    const key = await createApiKey(t, owner, 'read-only', 'reader');
    const viewer = await addMember(t, owner, 'viewer');
    const byKey = await t.request({ method: 'POST', url: '/v1/agents', token: key.key, payload: { name: 'refused' } });
    assert.equal(byKey.statusCode, 403, byKey.body);
    assert.equal(byKey.json().code, 'insufficient_scope');
    const byViewer = await t.request({ method: 'DELETE', url: `/v1/api-keys/${key.id}`, ...as(viewer), workspaceId: owner.workspaceId });
    assert.equal(byViewer.statusCode, 403, byViewer.body);
    assert.equal(byViewer.json().code, 'insufficient_scope');
    const rows = await t.platform.db
      .selectFrom('audit_log')
      .select(['actor_type', 'actor_id', 'action', 'method', 'route', 'resource_id', 'status_code', 'request_id'])
      .where('workspace_id', '=', owner.workspaceId)
      .where('status_code', '=', 403)
      .orderBy('id')
      .execute();
    assert.deepEqual(rows, [
      { actor_type: 'api_key', actor_id: key.id, action: 'agents.create', method: 'POST', route: '/v1/agents', resource_id: null, status_code: 403, request_id: byKey.headers['x-request-id'] },
      { actor_type: 'user', actor_id: viewer.id, action: 'api_keys.delete', method: 'DELETE', route: '/v1/api-keys/:id', resource_id: key.id, status_code: 403, request_id: byViewer.headers['x-request-id'] },
    ]);
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

  it('keeps the row of DELETE /v1/workspaces/{id}, and the deleted workspace\'s earlier rows', async () => {
    const owner = await signUp(t);
    const created = await t.request({ method: 'POST', url: '/v1/workspaces', ...as(owner), payload: { name: 'Short-lived' } });
    assert.equal(created.statusCode, 201, created.body);
    const doomed = created.json().id as string;
    const key = await t.request({ method: 'POST', url: '/v1/api-keys', token: owner.accessToken, workspaceId: doomed, payload: { name: 'k', scope: 'write' } });
    assert.equal(key.statusCode, 201, key.body);
    const deleted = await t.request({ method: 'DELETE', url: `/v1/workspaces/${doomed}`, ...as(owner) });
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.equal(await t.platform.db.selectFrom('workspaces').select('id').where('id', '=', doomed).executeTakeFirst(), undefined);

    // The workspace is gone, so its trail is no longer listed by the API: read the table.
    const rows = await t.platform.db
      .selectFrom('audit_log')
      .select(['action', 'actor_id', 'resource_id', 'status_code', 'request_id'])
      .where('workspace_id', '=', doomed)
      .orderBy('id', 'desc')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.action, r.actor_id, r.resource_id, r.status_code]),
      [
        ['workspaces.delete', owner.id, doomed, 204],
        ['api_keys.create', owner.id, key.json().id, 201],
        ['workspaces.create', owner.id, doomed, 201],
      ],
    );
    assert.equal(rows[0].request_id, deleted.headers['x-request-id']);
  });

  it('keeps an index on audit_log.workspace_id and no foreign key to workspaces', async () => {
    const { rows: indexes } = await sql<{ indexdef: string }>`select indexdef from pg_indexes where tablename = 'audit_log' and schemaname = current_schema()`.execute(t.platform.db);
    assert.ok(indexes.some((i) => /\(workspace_id, id\)/.test(i.indexdef)), JSON.stringify(indexes));
    const { rows: keys } = await sql<{ n: number }>`select count(*)::int as n from pg_constraint where contype = 'f' and conrelid = 'audit_log'::regclass`.execute(t.platform.db);
    assert.equal(keys[0].n, 0);
  });

  /** The audit row of a response (not the key-use row, which shares its request id). */
  async function auditRowOf(workspaceId: string, res: { headers: Record<string, unknown> }) {
    return t.platform.db
      .selectFrom('audit_log')
      .select(['action', 'status_code', 'resource_id', 'user_agent'])
      .where('workspace_id', '=', workspaceId)
      .where('request_id', '=', String(res.headers['x-request-id']))
      .where('action', '!=', 'api_key.used')
      .execute();
  }

  it('records a request whose header holds NUL (PostgreSQL refuses it in text)', async () => {
    const owner = await signUp(t);
    const res = await t.request({ method: 'PATCH', url: '/v1/agents/agent_x', ...as(owner), payload: { name: 'x' }, headers: { 'user-agent': 'probe\u0000/1' } });
    assert.equal(res.statusCode, 404, res.body);
    const rows = await auditRowOf(owner.workspaceId, res);
    assert.deepEqual(rows, [{ action: 'agents.update', status_code: 404, resource_id: 'agent_x', user_agent: 'probe\uFFFD/1' }]);
  });

  it('records requests with NUL in a path parameter, whatever status they get', async () => {
    const owner = await signUp(t);
    const key = await createApiKey(t, owner, 'write', 'hostile');
    for (const [method, url, action] of [
      ['POST', '/v1/agents/%00/duplicate', 'agents.duplicate'],
      ['DELETE', '/v1/agents/agent_%00x', 'agents.delete'],
    ] as const) {
      const res = await t.request({ method, url, token: key.key });
      assert.ok(res.statusCode >= 400, `${url}: ${res.statusCode}`);
      const rows = await auditRowOf(owner.workspaceId, res);
      assert.equal(rows.length, 1, `${method} ${url} (${res.statusCode}) left its audit row`);
      assert.equal(rows[0].action, action);
      assert.equal(rows[0].status_code, res.statusCode, 'the status the caller saw');
      assert.ok(!rows[0].resource_id?.includes('\u0000'), 'no NUL stored');
    }
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

describe('route conventions (unit)', () => {
  it('refuse an audit setting on a GET route, which writes no audit row; a write route keeps its own', async () => {
    const app = Fastify();
    enforceRouteConventions(app);
    const route = (method: 'GET' | 'DELETE') => ({ method, url: '/v1/things/:thing_id', config: { access: { auth: 'workspace' as const, scope: 'read-only' as const }, audit: { resourceParam: 'thing_id' } }, schema: { operationId: `thing${method}` }, handler: async () => ({}) });
    app.route(route('DELETE'));
    assert.throws(() => app.route(route('GET')), { message: 'route GET /v1/things/:thing_id declares config.audit, but reads are not audited' });
    await app.close();
  });
});

describe('storableText (unit)', () => {
  it('replaces what PostgreSQL refuses in text, keeps the rest, and caps the length', () => {
    assert.equal(storableText('a\u0000b'), 'a\uFFFDb');
    assert.equal(storableText('\u0000'), '\uFFFD');
    assert.equal(storableText('x\uD800y\uDC00z'), 'x\uFFFDy\uFFFDz', 'lone surrogates');
    assert.equal(storableText('emoji \u{1F600} é'), 'emoji \u{1F600} é', 'pairs and accents stay');
    assert.equal(storableText('y'.repeat(2000)).length, 512);
    assert.equal(storableText(`${'y'.repeat(511)}\u{1F600}`), `${'y'.repeat(511)}\uFFFD`, 'a pair cut in half is not left lone');
    assert.equal(storableText(null), null);
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
