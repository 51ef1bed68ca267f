import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';
import { createKbAgent, createWidget } from './test-helpers.ts';

const t = await buildTestApp();

describe('widgets (owner operations)', () => {
  it('creates with defaults, reads back, lists newest first (filter by agent), patches (theme merged), deletes', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const created = await t.request({ method: 'POST', url: '/v1/widgets', ...as(user), payload: { agent_id: agent.id } });
    assert.equal(created.statusCode, 201, created.body);
    const widget = created.json();
    assert.match(widget.id, /^wdg_[0-9a-z]{26}$/);
    assert.equal(widget.name, 'Ada widget');
    assert.equal(widget.mode, 'chat');
    assert.deepEqual(widget.theme, { title: 'Ada', greeting: null, primary_color: '#4f46e5', position: 'bottom-right' });
    assert.deepEqual(widget.allowed_origins, []);
    assert.equal(widget.embed_url, `http://localhost:3000/v1/widgets/${widget.id}/embed.js`);
    assert.equal(widget.embed_code, `<script src="${widget.embed_url}" async></script>`);
    assert.deepEqual((await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}`, ...as(user) })).json(), widget);

    const other = await createCallAgent(t, user, { name: 'Bo' });
    const second = await createWidget(t, user, {
      agent_id: other.id,
      name: 'Site',
      mode: 'both',
      theme: { title: 'Ask Bo', greeting: 'Hey!', primary_color: '#0E7490', position: 'bottom-left' },
      allowed_origins: ['https://WWW.Example.com/', 'http://localhost:8080', 'https://www.example.com'],
    });
    assert.deepEqual(second.allowed_origins, ['https://www.example.com', 'http://localhost:8080']);
    const list = (await t.request({ method: 'GET', url: '/v1/widgets?limit=1', ...as(user) })).json();
    assert.deepEqual(list.data.map((w: { id: string }) => w.id), [second.id]);
    assert.equal(list.has_more, true);
    const rest = (await t.request({ method: 'GET', url: `/v1/widgets?cursor=${list.next_cursor}`, ...as(user) })).json();
    assert.deepEqual(rest.data.map((w: { id: string }) => w.id), [widget.id]);
    const byAgent = (await t.request({ method: 'GET', url: `/v1/widgets?agent_id=${agent.id}`, ...as(user) })).json();
    assert.deepEqual(byAgent.data.map((w: { id: string }) => w.id), [widget.id]);

    const patched = await t.request({ method: 'PATCH', url: `/v1/widgets/${widget.id}`, ...as(user), payload: { mode: 'voice', theme: { greeting: 'Welcome!' }, allowed_origins: ['https://shop.example.org'] } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().mode, 'voice');
    assert.deepEqual(patched.json().theme, { title: 'Ada', greeting: 'Welcome!', primary_color: '#4f46e5', position: 'bottom-right' });
    assert.deepEqual(patched.json().allowed_origins, ['https://shop.example.org']);
    assert.equal((await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}`, ...as(user) })).json().mode, 'voice');

    assert.equal((await t.request({ method: 'DELETE', url: `/v1/widgets/${widget.id}`, ...as(user) })).statusCode, 204);
    assert.equal((await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}`, ...as(user) })).statusCode, 404);
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/widgets/${widget.id}`, ...as(user) })).statusCode, 404);
    assert.equal((await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config` })).statusCode, 404, 'a deleted widget stops answering in public');
  });

  it('refuses bad input with 422 naming the field', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const stranger = await signUp(t);
    const foreign = await createCallAgent(t, stranger);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'agent_id'],
      [{ agent_id: foreign.id }, 'agent_id'],
      [{ agent_id: agent.id, mode: 'video' }, 'mode'],
      [{ agent_id: agent.id, theme: { primary_color: 'blue' } }, 'theme.primary_color'],
      [{ agent_id: agent.id, theme: { position: 'top' } }, 'theme.position'],
      [{ agent_id: agent.id, allowed_origins: ['https://ok.example.com', 'https://example.com/path'] }, 'allowed_origins.1'],
      [{ agent_id: agent.id, allowed_origins: ['ftp://example.com'] }, 'allowed_origins.0'],
      [{ agent_id: agent.id, allowed_origins: ['example.com'] }, 'allowed_origins.0'],
      [{ agent_id: agent.id, colour: 'red' }, 'colour'],
    ];
    for (const [payload, field] of cases) {
      const res = await t.request({ method: 'POST', url: '/v1/widgets', ...as(user), payload });
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      assert.ok(res.json().errors.some((e: { path: string }) => e.path === field), `${field}: ${res.body}`);
    }
    const widget = await createWidget(t, user, { agent_id: agent.id });
    const patch = await t.request({ method: 'PATCH', url: `/v1/widgets/${widget.id}`, ...as(user), payload: { agent_id: foreign.id } });
    assert.equal(patch.statusCode, 422);
  });

  it("lists the widget's conversations for the owner (newest first, by visitor) and shows one in full", async () => {
    const user = await signUp(t);
    const agent = await createKbAgent(t, user);
    const widget = await createWidget(t, user, { agent_id: agent.id, theme: { greeting: 'Hello from the widget!' } });
    const chat = (payload: Record<string, unknown>) => t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/chat`, payload });
    const first = await chat({ message: 'When do you open?', visitor_id: 'visitor-1' });
    assert.equal(first.statusCode, 200, first.body);
    const again = await chat({ message: 'Where can I park?', conversation_id: first.json().conversation_id, visitor_id: 'visitor-1' });
    assert.equal(again.json().conversation_id, first.json().conversation_id);
    const second = await chat({ message: 'Hi', visitor_id: 'visitor-2' });

    const list = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/conversations`, ...as(user) });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(list.json().data.map((c: { id: string }) => c.id), [second.json().conversation_id, first.json().conversation_id]);
    const firstRow = list.json().data[1];
    assert.equal(firstRow.message_count, 5);
    assert.equal(firstRow.visitor_id, 'visitor-1');
    assert.equal(firstRow.last_message, again.json().reply.slice(0, 200));
    const byVisitor = (await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/conversations?visitor_id=visitor-2`, ...as(user) })).json();
    assert.deepEqual(byVisitor.data.map((c: { id: string }) => c.id), [second.json().conversation_id]);

    const detail = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/conversations/${first.json().conversation_id}`, ...as(user) });
    assert.equal(detail.statusCode, 200, detail.body);
    assert.deepEqual(
      detail.json().messages.map((m: { role: string; text: string }) => [m.role, m.text]),
      [
        ['agent', 'Hello from the widget!'],
        ['user', 'When do you open?'],
        ['agent', first.json().reply],
        ['user', 'Where can I park?'],
        ['agent', again.json().reply],
      ],
    );
    // A conversation of the agent's API chat is not the widget's.
    const api = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/chat`, ...as(user), payload: { message: 'Hi' } });
    assert.equal((await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/conversations/${api.json().conversation_id}`, ...as(user) })).statusCode, 404);
    assert.equal((await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/chat`, payload: { message: 'Hi', conversation_id: api.json().conversation_id } })).statusCode, 404);
    const apiContinued = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/chat`, ...as(user), payload: { message: 'Hi', conversation_id: first.json().conversation_id } });
    assert.equal(apiContinued.statusCode, 404, 'a widget conversation is not continued through the API chat');
  });
});

securitySuite('widgets', async () => t, {
  'POST /v1/widgets': {
    scope: 'write',
    prepare: async (app, owner) => ({ method: 'POST', url: '/v1/widgets', payload: { agent_id: (await createCallAgent(app, owner)).id } }),
  },
  'GET /v1/widgets': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/widgets' }) },
  'GET /v1/widgets/{id}': {
    scope: 'read-only',
    ownedResource: true,
    prepare: async (app, owner) => ({ method: 'GET', url: `/v1/widgets/${(await createWidget(app, owner, { agent_id: (await createCallAgent(app, owner)).id })).id}` }),
  },
  'PATCH /v1/widgets/{id}': {
    scope: 'write',
    ownedResource: true,
    prepare: async (app, owner) => ({ method: 'PATCH', url: `/v1/widgets/${(await createWidget(app, owner, { agent_id: (await createCallAgent(app, owner)).id })).id}`, payload: { name: 'x' } }),
  },
  'DELETE /v1/widgets/{id}': {
    scope: 'write',
    ownedResource: true,
    prepare: async (app, owner) => ({ method: 'DELETE', url: `/v1/widgets/${(await createWidget(app, owner, { agent_id: (await createCallAgent(app, owner)).id })).id}` }),
  },
  'GET /v1/widgets/{id}/conversations': {
    scope: 'read-only',
    ownedResource: true,
    prepare: async (app, owner) => ({ method: 'GET', url: `/v1/widgets/${(await createWidget(app, owner, { agent_id: (await createCallAgent(app, owner)).id })).id}/conversations` }),
  },
  'GET /v1/widgets/{id}/conversations/{conv_id}': {
    scope: 'read-only',
    ownedResource: true,
    prepare: async (app, owner) => {
      const widget = await createWidget(app, owner, { agent_id: (await createCallAgent(app, owner)).id });
      const chat = await app.request({ method: 'POST', url: `/v1/widgets/${widget.id}/chat`, payload: { message: 'Hello' } });
      assert.equal(chat.statusCode, 200, chat.body);
      return { method: 'GET', url: `/v1/widgets/${widget.id}/conversations/${chat.json().conversation_id}` };
    },
  },
});
