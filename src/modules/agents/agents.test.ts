import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { createApiKey, signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { newId } from '../../platform/ids.ts';

const FULL_AGENT = {
  name: 'Front desk',
  prompt: 'You are the receptionist of {{company}}.',
  first_message: 'Hello, {{company}} here.',
  language: 'en-GB',
  voice: 'builtin-cora',
  llm: { provider: 'builtin', temperature: 0.3 },
  transfer_number: '+1 555 010 0200',
  functions: [
    {
      name: 'check_order',
      description: 'Look up an order by its number',
      url: 'https://example.com/orders',
      parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
      timeout_ms: 3000,
    },
  ],
  extraction_fields: [
    { name: 'email', type: 'string', description: 'Caller email' },
    { name: 'topic', type: 'enum', description: 'Topic', enum: ['sales', 'support'] },
  ],
  end_call_phrases: ['bye now'],
  max_duration_seconds: 300,
  voicemail: { action: 'leave_message', message: 'Please call back.' },
  webhook_url: 'https://example.com/hooks/agent',
  webhook_events: ['call.ended', 'call.completed'],
  metadata: { team: 'blue', tier: 2 },
};

async function createAgent(t: TestApp, user: TestUser, body: Record<string, unknown> = { name: 'Agent' }) {
  const res = await t.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

describe('agents', async () => {
  const t = await buildTestApp();

  it('creates an agent with every field, shows the secret once, and reads it back without it', async () => {
    const user = await signUp(t);
    const created = await createAgent(t, user, FULL_AGENT);
    assert.match(created.id, /^agent_[0-9a-z]{26}$/);
    assert.match(created.webhook_secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.equal(Buffer.from(created.webhook_secret.slice(6), 'base64').length, 24);
    assert.equal(created.transfer_number, '+15550100200');
    assert.deepEqual(created.llm, { provider: 'builtin', model: 'builtin', temperature: 0.3 });
    assert.deepEqual(created.functions[0], { ...FULL_AGENT.functions[0], method: 'POST' });
    assert.deepEqual(created.extraction_fields, FULL_AGENT.extraction_fields);
    assert.deepEqual(created.metadata, FULL_AGENT.metadata);

    const read = await t.request({ method: 'GET', url: `/v1/agents/${created.id}`, token: user.accessToken });
    assert.equal(read.statusCode, 200, read.body);
    const agent = read.json();
    assert.equal('webhook_secret' in agent, false);
    const { webhook_secret: _secret, ...withoutSecret } = created;
    assert.deepEqual(agent, withoutSecret);
    const list = await t.request({ method: 'GET', url: '/v1/agents', token: user.accessToken });
    assert.equal(list.body.includes('whsec_'), false);
    assert.equal(read.body.includes('whsec_'), false);
    // The secret is stored (it signs deliveries), in clear.
    const row = await t.platform.db.selectFrom('agents').select('webhook_secret').where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal(row.webhook_secret, created.webhook_secret);
  });

  it('applies defaults to a minimal agent', async () => {
    const user = await signUp(t);
    const agent = await createAgent(t, user, { name: 'Minimal' });
    assert.equal(agent.language, 'en-US');
    assert.equal(agent.voice, 'builtin-ava');
    assert.equal(agent.max_duration_seconds, 600);
    assert.deepEqual(agent.voicemail, { action: 'hangup', message: null });
    assert.deepEqual(agent.llm, { provider: 'builtin', model: 'builtin', temperature: 0.7 });
    assert.deepEqual([agent.functions, agent.knowledge_base_ids, agent.webhook_events, agent.metadata], [[], [], [], {}]);
    assert.equal(agent.first_message, null);
    assert.equal(agent.webhook_url, null);
  });

  it('lists agents newest first with cursor paging and a name filter', async () => {
    const user = await signUp(t);
    const a = await createAgent(t, user, { name: 'Sales bot' });
    const b = await createAgent(t, user, { name: 'Support bot', language: 'fr-FR' });
    const c = await createAgent(t, user, { name: 'SALES 100%' });
    const page1 = await t.request({ method: 'GET', url: '/v1/agents?limit=2', token: user.accessToken });
    assert.equal(page1.statusCode, 200, page1.body);
    assert.deepEqual(page1.json().data.map((x: { id: string }) => x.id), [c.id, b.id]);
    assert.equal(page1.json().has_more, true);
    const page2 = await t.request({ method: 'GET', url: `/v1/agents?limit=2&cursor=${page1.json().next_cursor}`, token: user.accessToken });
    assert.deepEqual(page2.json().data.map((x: { id: string }) => x.id), [a.id]);
    assert.equal(page2.json().has_more, false);
    assert.equal(page2.json().next_cursor, null);
    const sales = await t.request({ method: 'GET', url: '/v1/agents?name=sales', token: user.accessToken });
    assert.deepEqual(sales.json().data.map((x: { id: string }) => x.id), [c.id, a.id]);
    const percent = await t.request({ method: 'GET', url: `/v1/agents?name=${encodeURIComponent('100%')}`, token: user.accessToken });
    assert.deepEqual(percent.json().data.map((x: { id: string }) => x.id), [c.id]);
    const french = await t.request({ method: 'GET', url: '/v1/agents?language=fr-FR', token: user.accessToken });
    assert.deepEqual(french.json().data.map((x: { id: string }) => x.id), [b.id]);
  });

  it('updates only the fields given, merges llm, and reads the change back', async () => {
    const user = await signUp(t);
    const agent = await createAgent(t, user, FULL_AGENT);
    const res = await t.request({
      method: 'PATCH',
      url: `/v1/agents/${agent.id}`,
      token: user.accessToken,
      payload: { webhook_url: 'https://example.org/new', llm: { temperature: 1.5 }, transfer_number: null, end_call_phrases: [] },
    });
    assert.equal(res.statusCode, 200, res.body);
    const read = (await t.request({ method: 'GET', url: `/v1/agents/${agent.id}`, token: user.accessToken })).json();
    assert.equal(read.webhook_url, 'https://example.org/new');
    assert.deepEqual(read.llm, { provider: 'builtin', model: 'builtin', temperature: 1.5 });
    assert.equal(read.transfer_number, null);
    assert.deepEqual(read.end_call_phrases, []);
    assert.equal(read.name, FULL_AGENT.name);
    assert.deepEqual(read.functions, agent.functions);
    assert.ok(read.updated_at >= agent.updated_at);
  });

  it('deletes an agent: then 404 on read, update and delete, and gone from the list', async () => {
    const user = await signUp(t);
    const agent = await createAgent(t, user);
    const del = await t.request({ method: 'DELETE', url: `/v1/agents/${agent.id}`, token: user.accessToken });
    assert.equal(del.statusCode, 204, del.body);
    for (const [method, payload] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const res = await t.request({ method, url: `/v1/agents/${agent.id}`, token: user.accessToken, payload });
      assert.equal(res.statusCode, 404, `${method} ${res.body}`);
    }
    const list = await t.request({ method: 'GET', url: '/v1/agents', token: user.accessToken });
    assert.equal(list.json().data.length, 0);
  });

  it('duplicates an agent with a new id, a "(copy)" name and a new secret', async () => {
    const user = await signUp(t);
    const agent = await createAgent(t, user, FULL_AGENT);
    const res = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/duplicate`, token: user.accessToken });
    assert.equal(res.statusCode, 201, res.body);
    const copy = res.json();
    assert.notEqual(copy.id, agent.id);
    assert.equal(copy.name, 'Front desk (copy)');
    assert.match(copy.webhook_secret, /^whsec_/);
    assert.notEqual(copy.webhook_secret, agent.webhook_secret);
    assert.deepEqual(copy.functions, agent.functions);
    assert.equal(copy.prompt, agent.prompt);
    const read = await t.request({ method: 'GET', url: `/v1/agents/${copy.id}`, token: user.accessToken });
    assert.equal(read.json().name, 'Front desk (copy)');
    const named = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/duplicate`, token: user.accessToken, payload: { name: 'Second desk' } });
    assert.equal(named.json().name, 'Second desk');
  });

  it('rotates the webhook secret: a new secret, the old one kept as previous', async () => {
    const user = await signUp(t);
    const agent = await createAgent(t, user);
    const res = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/webhook-secret/rotate`, token: user.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    const { webhook_secret } = res.json();
    assert.match(webhook_secret, /^whsec_/);
    assert.notEqual(webhook_secret, agent.webhook_secret);
    const row = await t.platform.db.selectFrom('agents').selectAll().where('id', '=', agent.id).executeTakeFirstOrThrow();
    assert.equal(row.webhook_secret, webhook_secret);
    assert.equal(row.previous_webhook_secret, agent.webhook_secret);
    assert.ok(row.webhook_secret_rotated_at);
  });

  it('accepts knowledge bases of the workspace and refuses others by path', async () => {
    const user = await signUp(t);
    const other = await signUp(t);
    const kbOf = async (owner: TestUser) => {
      const id = newId('kb');
      await t.platform.db
        .insertInto('knowledge_bases')
        .values({ id, workspace_id: owner.workspaceId, name: 'KB', description: null, language: 'en', ts_config: 'english', created_at: new Date(), updated_at: new Date() })
        .execute();
      return id;
    };
    const mine = await kbOf(user);
    const theirs = await kbOf(other);
    const ok = await t.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: { name: 'KB agent', knowledge_base_ids: [mine] } });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.deepEqual(ok.json().knowledge_base_ids, [mine]);
    const bad = await t.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: { name: 'KB agent', knowledge_base_ids: [mine, theirs] } });
    assert.equal(bad.statusCode, 422, bad.body);
    assert.deepEqual(bad.json().errors.map((e: { path: string }) => e.path), ['knowledge_base_ids.1']);
  });

  describe('validation', () => {
    const cases: Array<[string, Record<string, unknown>, string[]]> = [
      ['a transfer number that is not E.164', { transfer_number: '12' }, ['transfer_number']],
      ['a transfer number in letters', { transfer_number: 'call me' }, ['transfer_number']],
      ['an unknown voice', { voice: 'nobody' }, ['voice']],
      ['an unknown language', { language: 'xx-XX' }, ['language']],
      [
        'duplicate function names',
        {
          functions: [
            { name: 'lookup', url: 'https://example.com/a' },
            { name: 'lookup', url: 'https://example.com/b' },
          ],
        },
        ['functions.1.name'],
      ],
      ['a function named like a built-in tool', { functions: [{ name: 'end_call', url: 'https://example.com/a' }] }, ['functions.0.name']],
      ['a bad function name', { functions: [{ name: '1st', url: 'https://example.com/a' }] }, ['functions.0.name']],
      ['parameters that are not a JSON Schema', { functions: [{ name: 'f', url: 'https://example.com/a', parameters: { type: 'object', properties: { x: { type: 'strng' } } } }] }, ['functions.0.parameters']],
      ['parameters that do not describe an object', { functions: [{ name: 'f', url: 'https://example.com/a', parameters: { type: 'string' } }] }, ['functions.0.parameters']],
      ['a non-http function URL', { functions: [{ name: 'f', url: 'ftp://example.com/a' }] }, ['functions.0.url']],
      ['an enum field without values', { extraction_fields: [{ name: 'x', type: 'enum' }] }, ['extraction_fields.0.enum']],
      ['values on a non-enum field', { extraction_fields: [{ name: 'x', type: 'string', enum: ['a'] }] }, ['extraction_fields.0.enum']],
      ['duplicate extraction fields', { extraction_fields: [{ name: 'x', type: 'string' }, { name: 'x', type: 'number' }] }, ['extraction_fields.1.name']],
      ['a voicemail message missing', { voicemail: { action: 'leave_message' } }, ['voicemail.message']],
      ['an unknown webhook event', { webhook_events: ['call.exploded'] }, ['webhook_events.0']],
      ['a temperature above 2', { llm: { temperature: 2.5 } }, ['llm.temperature']],
      ['openai without LLM_BASE_URL', { llm: { provider: 'openai' } }, ['llm.provider']],
      ['a knowledge base id of the wrong shape', { knowledge_base_ids: ['agent_1'] }, ['knowledge_base_ids.0']],
      ['an unknown field', { nmae: 'typo' }, ['nmae']],
    ];
    for (const [label, body, paths] of cases) {
      it(`refuses ${label} with 422 naming ${paths.join(', ')}`, async () => {
        const user = await signUp(t);
        const res = await t.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: { name: 'Bad', ...body } });
        assert.equal(res.statusCode, 422, res.body);
        assert.equal(res.json().code, 'validation_failed');
        assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), paths);
      });
    }

    it('refuses the same problems on PATCH, leaving the agent unchanged', async () => {
      const user = await signUp(t);
      const agent = await createAgent(t, user, FULL_AGENT);
      const res = await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, token: user.accessToken, payload: { transfer_number: '+1', voice: 'nobody' } });
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path).sort(), ['transfer_number', 'voice']);
      const read = await t.request({ method: 'GET', url: `/v1/agents/${agent.id}`, token: user.accessToken });
      assert.equal(read.json().transfer_number, '+15550100200');
    });
  });

  describe('with private URLs refused (ALLOW_PRIVATE_URLS=false)', async () => {
    const strict = await buildTestApp({ env: { ALLOW_PRIVATE_URLS: 'false' } });

    it('refuses private webhook and function URLs with 422 naming the field', async () => {
      const user = await signUp(strict);
      const res = await strict.request({
        method: 'POST',
        url: '/v1/agents',
        token: user.accessToken,
        payload: {
          name: 'SSRF',
          webhook_url: 'http://127.0.0.1:8080/hook',
          functions: [
            { name: 'ok', url: 'https://93.184.215.14/fine' },
            { name: 'meta', url: 'http://169.254.169.254/latest/meta-data' },
          ],
        },
      });
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path).sort(), ['functions.1.url', 'webhook_url']);
      const agent = await createAgent(strict, user, { name: 'Later' });
      const patch = await strict.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, token: user.accessToken, payload: { webhook_url: 'http://10.0.0.5/hook' } });
      assert.equal(patch.statusCode, 422, patch.body);
      assert.deepEqual(patch.json().errors.map((e: { path: string }) => e.path), ['webhook_url']);
    });

    it('refuses again at call time a function URL that became private (reported, not thrown)', async () => {
      const user = await signUp(strict);
      const agent = await createAgent(strict, user, { name: 'Rebound', functions: [{ name: 'f', url: 'https://93.184.215.14/fine' }] });
      // As if DNS now answered with a private address: the stored URL points inside.
      const functions = [{ ...agent.functions[0], url: 'http://127.0.0.1:9/inside' }];
      await strict.platform.db.updateTable('agents').set({ functions: JSON.stringify(functions) }).where('id', '=', agent.id).execute();
      const res = await strict.request({ method: 'POST', url: `/v1/agents/${agent.id}/test-function`, token: user.accessToken, payload: { name: 'f' } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, null);
      assert.equal(res.json().error.code, 'url_refused');
    });
  });

  it('lets a read-only key read but not write', async () => {
    const user = await signUp(t);
    const agent = await createAgent(t, user);
    const key = await createApiKey(t, user, 'read-only');
    const read = await t.request({ method: 'GET', url: `/v1/agents/${agent.id}`, token: key.key });
    assert.equal(read.statusCode, 200, read.body);
    const write = await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, token: key.key, payload: { name: 'x' } });
    assert.equal(write.statusCode, 403, write.body);
  });
});

let shared: Promise<TestApp> | undefined;
const app = () => {
  shared ??= buildTestApp();
  return shared;
};

async function ownedAgent(t: TestApp, owner: TestUser) {
  return (await createAgent(t, owner, { name: 'Owned', functions: [{ name: 'f', url: 'https://example.com/f' }] })).id as string;
}

const auth = (owner: TestUser) => ({ authorization: `Bearer ${owner.accessToken}` });

securitySuite('agents', app, {
  'POST /v1/agents': { scope: 'write', prepare: async (_t, owner) => ({ method: 'POST', url: '/v1/agents', headers: auth(owner), payload: { name: 'x' } }) },
  'GET /v1/agents': { scope: 'read-only', prepare: async (_t, owner) => ({ method: 'GET', url: '/v1/agents', headers: auth(owner) }) },
  'GET /v1/agents/{id}': {
    scope: 'read-only',
    ownedResource: true,
    prepare: async (t, owner) => ({ method: 'GET', url: `/v1/agents/${await ownedAgent(t, owner)}`, headers: auth(owner) }),
  },
  'PATCH /v1/agents/{id}': {
    scope: 'write',
    ownedResource: true,
    prepare: async (t, owner) => ({ method: 'PATCH', url: `/v1/agents/${await ownedAgent(t, owner)}`, headers: auth(owner), payload: { name: 'y' } }),
  },
  'DELETE /v1/agents/{id}': {
    scope: 'write',
    ownedResource: true,
    prepare: async (t, owner) => ({ method: 'DELETE', url: `/v1/agents/${await ownedAgent(t, owner)}`, headers: auth(owner) }),
  },
  'POST /v1/agents/{id}/duplicate': {
    scope: 'write',
    ownedResource: true,
    prepare: async (t, owner) => ({ method: 'POST', url: `/v1/agents/${await ownedAgent(t, owner)}/duplicate`, headers: auth(owner), payload: {} }),
  },
  'POST /v1/agents/{id}/webhook-secret/rotate': {
    scope: 'write',
    ownedResource: true,
    prepare: async (t, owner) => ({ method: 'POST', url: `/v1/agents/${await ownedAgent(t, owner)}/webhook-secret/rotate`, headers: auth(owner) }),
  },
  'POST /v1/agents/{id}/webhook/test': {
    scope: 'write',
    ownedResource: true,
    prepare: async (t, owner) => ({ method: 'POST', url: `/v1/agents/${await ownedAgent(t, owner)}/webhook/test`, headers: auth(owner), payload: {} }),
  },
  'POST /v1/agents/{id}/test-function': {
    scope: 'write',
    ownedResource: true,
    prepare: async (t, owner) => ({ method: 'POST', url: `/v1/agents/${await ownedAgent(t, owner)}/test-function`, headers: auth(owner), payload: { name: 'f' } }),
  },
  'POST /v1/agents/{id}/chat': {
    scope: 'write',
    ownedResource: true,
    prepare: async (t, owner) => ({ method: 'POST', url: `/v1/agents/${await ownedAgent(t, owner)}/chat`, headers: auth(owner), payload: { message: 'hi' } }),
  },
});
