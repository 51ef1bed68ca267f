import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';
import { createKbAgent, createWidget } from './test-helpers.ts';

// The owner's widget operations, field by field: each PATCH field changes only itself (theme
// merged key by key), defaults cut to their limits, errors that say what is wrong, and the pages
// of a widget's conversations.

const t = await buildTestApp();
const THEME = { title: 'Ask Bo', greeting: 'Hey!', primary_color: '#0e7490', position: 'bottom-left' };

describe('widgets (owner operations): field rules', () => {
  it('PATCH changes each field alone; theme keys are merged one by one (colours lower-cased)', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const widget = await createWidget(t, user, { agent_id: agent.id, name: 'Site', mode: 'both', theme: THEME });
    const patch = async (payload: Record<string, unknown>) => {
      const res = await t.request({ method: 'PATCH', url: `/v1/widgets/${widget.id}`, ...as(user), payload });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const renamed = await patch({ name: 'Shop' });
    assert.deepEqual([renamed.name, renamed.mode, renamed.theme], ['Shop', 'both', THEME]);
    assert.deepEqual((await patch({ theme: { title: 'Ask us' } })).theme, { ...THEME, title: 'Ask us' });
    assert.deepEqual((await patch({ theme: { primary_color: '#ABCDEF' } })).theme, { ...THEME, title: 'Ask us', primary_color: '#abcdef' });
    assert.deepEqual((await patch({ theme: { position: 'bottom-right' } })).theme, { ...THEME, title: 'Ask us', primary_color: '#abcdef', position: 'bottom-right' });
    const cleared = await patch({ theme: { greeting: null } });
    assert.deepEqual(cleared.theme, { title: 'Ask us', greeting: null, primary_color: '#abcdef', position: 'bottom-right' });
    assert.equal(cleared.name, 'Shop');
    const read = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}`, ...as(user) });
    assert.deepEqual(read.json(), cleared);
    const config = (await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config` })).json();
    assert.deepEqual(config.theme, { title: 'Ask us', primary_color: '#abcdef', position: 'bottom-right' });
  });

  it('defaults from a long agent name stay within the limits: name 200 characters, title 100', async () => {
    const user = await signUp(t);
    const name = 'N'.repeat(200);
    const widget = (await createWidget(t, user, { agent_id: (await createCallAgent(t, user, { name })).id })) as unknown as { name: string; theme: { title: string } };
    assert.equal(widget.name, `${name} widget`.slice(0, 200));
    assert.equal(widget.theme.title, name.slice(0, 100));
    const short = (await createWidget(t, user, { agent_id: (await createCallAgent(t, user, { name: 'Bo' })).id })) as unknown as { name: string; theme: { title: string } };
    assert.deepEqual([short.name, short.theme.title], ['Bo widget', 'Bo']);
  });

  it('422s say what is wrong with each field', async () => {
    const user = await signUp(t);
    const stranger = await signUp(t);
    const foreign = await createCallAgent(t, stranger);
    const noAgent = await t.request({ method: 'POST', url: '/v1/widgets', ...as(user), payload: { agent_id: foreign.id } });
    assert.equal(noAgent.statusCode, 422);
    assert.equal(noAgent.json().detail, 'agent_id: no such agent in this workspace');
    assert.deepEqual(noAgent.json().errors, [{ path: 'agent_id', message: 'no such agent in this workspace' }]);

    const agent = await createCallAgent(t, user);
    const message = 'must be an origin such as https://www.example.com (scheme, host and optional port; no path)';
    const origins = await t.request({ method: 'POST', url: '/v1/widgets', ...as(user), payload: { agent_id: agent.id, allowed_origins: ['https://ok.example.com', 'https://example.com/path', 'ftp://example.com'] } });
    assert.equal(origins.statusCode, 422);
    assert.equal(origins.json().detail, `allowed_origins.1: ${message}; allowed_origins.2: ${message}`);
    assert.deepEqual(origins.json().errors, [
      { path: 'allowed_origins.1', message },
      { path: 'allowed_origins.2', message },
    ]);
  });

  it('404s name what was not found', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id });
    const missing = 'wdg_00000000000000000000000000';
    for (const request of [
      { method: 'GET' as const, url: `/v1/widgets/${missing}` },
      { method: 'PATCH' as const, url: `/v1/widgets/${missing}`, payload: { name: 'x' } },
      { method: 'DELETE' as const, url: `/v1/widgets/${missing}` },
      { method: 'GET' as const, url: `/v1/widgets/${missing}/conversations` },
    ]) {
      const res = await t.request({ ...request, ...as(user) });
      assert.equal(res.statusCode, 404, `${request.method} ${request.url}`);
      assert.equal(res.json().detail, 'widget not found', `${request.method} ${request.url}`);
    }
    const conversation = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/conversations/conv_00000000000000000000000000`, ...as(user) });
    assert.equal(conversation.statusCode, 404);
    assert.equal(conversation.json().detail, 'conversation not found');
  });
});

describe("widgets (owner operations): the widget's conversations", () => {
  it('pages through the conversations one at a time, newest first', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id });
    const ids: string[] = [];
    for (const visitor of ['v-1', 'v-2', 'v-3']) {
      const res = await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/chat`, payload: { message: 'Hi', visitor_id: visitor } });
      assert.equal(res.statusCode, 200, res.body);
      ids.push(res.json().conversation_id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 3; i++) {
      const res = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/conversations?limit=1${cursor ? `&cursor=${cursor}` : ''}`, ...as(user) });
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json();
      assert.equal(page.data.length, 1, `page ${i + 1}`);
      assert.equal(page.has_more, i < 2, `page ${i + 1}`);
      seen.push(page.data[0].id);
      cursor = page.next_cursor;
    }
    assert.equal(cursor, null);
    // Ids sort by creation time: newest first is descending id order.
    assert.deepEqual(seen, [...ids].sort().reverse());
  });

  it('one conversation in full: last_message is its latest message, cut to 200 characters', async () => {
    const user = await signUp(t);
    const agent = await createKbAgent(t, user);
    const widget = await createWidget(t, user, { agent_id: agent.id, theme: { greeting: 'Hello from the widget!' } });
    const chat = await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/chat`, payload: { message: 'When do you open in the morning?' } });
    assert.equal(chat.statusCode, 200, chat.body);
    const id = chat.json().conversation_id;
    const detail = async () => (await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/conversations/${id}`, ...as(user) })).json();
    const short = await detail();
    assert.equal(short.message_count, 3);
    assert.equal(short.last_message, chat.json().reply.slice(0, 200));
    assert.equal(short.messages.at(-1).text, chat.json().reply);

    // A reply longer than 200 characters (the stored conversation, as a long answer leaves it).
    const long = `${'An answer that goes on. '.repeat(12)}The end.`;
    const row = await t.platform.db.selectFrom('agent_conversations').select('turns').where('id', '=', id).executeTakeFirstOrThrow();
    const turns = [...(row.turns as Array<{ role: string; text: string; at: string }>)];
    turns[turns.length - 1] = { ...turns[turns.length - 1], text: long };
    await t.platform.db.updateTable('agent_conversations').set({ turns: JSON.stringify(turns) }).where('id', '=', id).execute();
    const cut = await detail();
    assert.ok(long.length > 200);
    assert.equal(cut.last_message, long.slice(0, 200));
    assert.equal(cut.messages.at(-1).text, long, 'the message itself is whole');
    const listed = (await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/conversations`, ...as(user) })).json();
    assert.equal(listed.data[0].last_message, long.slice(0, 200), 'the list shows the same line');
  });
});
