import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { createCallAgent } from '../calls/test-helpers.ts';
import { createWidget } from './test-helpers.ts';

// The public widget endpoints' finer rules: what a refused page is told, which CORS headers an
// allowed one gets (preflight or not), the ETag of embed.js, the preview's security headers, the
// greeting a widget falls back to, and how its chat is recorded.

const t = await buildTestApp();

describe('public widget endpoints: answers and headers', () => {
  it('a refused Origin is named (at most 200 characters of it) with the fix; unknown widgets are "widget not found"', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id, allowed_origins: ['https://shop.example.com'] });
    const refused = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config`, headers: { origin: 'https://evil.example.net' } });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().detail, 'this widget is not allowed on https://evil.example.net; add the origin to its allowed_origins');
    const long = `https://${'a'.repeat(300)}.example.net`;
    const longRefused = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config`, headers: { origin: long } });
    assert.equal(longRefused.statusCode, 403);
    assert.equal(longRefused.json().detail, `this widget is not allowed on ${long.slice(0, 200)}; add the origin to its allowed_origins`);

    for (const id of ['nope', 'wdg_00000000000000000000000000']) {
      const missing = await t.request({ method: 'GET', url: `/v1/widgets/${id}/config` });
      assert.equal(missing.statusCode, 404, id);
      assert.equal(missing.json().detail, 'widget not found', id);
    }
  });

  it('preflight answers methods, headers and a 10-minute Max-Age; a plain request gets none of them', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id, allowed_origins: ['https://shop.example.com'] });
    const origin = 'https://shop.example.com';
    const preflight = await t.request({ method: 'OPTIONS', url: `/v1/widgets/${widget.id}/chat`, headers: { origin, 'access-control-request-method': 'POST' } });
    assert.equal(preflight.statusCode, 204, preflight.body);
    assert.equal(preflight.headers['access-control-allow-methods'], 'GET, POST, OPTIONS');
    assert.equal(preflight.headers['access-control-allow-headers'], 'Content-Type, Idempotency-Key, X-Request-Id');
    assert.equal(preflight.headers['access-control-max-age'], '600');
    const plain = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config`, headers: { origin } });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['access-control-allow-origin'], origin);
    assert.deepEqual(
      ['access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age'].map((h) => plain.headers[h]),
      [undefined, undefined, undefined],
    );
  });

  it('preflight of an endpoint name longer than 20 characters is refused (422)', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id });
    const headers = { origin: 'https://shop.example.com', 'access-control-request-method': 'POST' };
    assert.equal((await t.request({ method: 'OPTIONS', url: `/v1/widgets/${widget.id}/${'x'.repeat(20)}`, headers })).statusCode, 204);
    const long = await t.request({ method: 'OPTIONS', url: `/v1/widgets/${widget.id}/${'x'.repeat(21)}`, headers });
    assert.equal(long.statusCode, 422, long.body);
  });

  it("embed.js: the ETag is the script's SHA-256 (27 base64url characters); a W/ inside the quotes is another tag", async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id });
    const url = `/v1/widgets/${widget.id}/embed.js`;
    const res = await t.request({ method: 'GET', url });
    assert.equal(res.statusCode, 200);
    const etag = `"${createHash('sha256').update(res.rawPayload).digest('base64url').slice(0, 27)}"`;
    assert.equal(res.headers.etag, etag);
    const inside = await t.request({ method: 'GET', url, headers: { 'if-none-match': `"W/${etag.slice(1)}` } });
    assert.equal(inside.statusCode, 200, 'only a leading W/ marks a weak tag');
    assert.equal((await t.request({ method: 'GET', url, headers: { 'if-none-match': `W/${etag}` } })).statusCode, 304);
  });

  it('preview: never cached, never sniffed', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id });
    const res = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/preview` });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
  });

  it("the greeting: the agent's first_message trimmed; the default line when it is blank or unset", async () => {
    const user = await signUp(t);
    const greetingOf = async (firstMessage: string | null) => {
      const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user, { first_message: firstMessage })).id });
      const res = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config` });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().greeting;
    };
    assert.equal(await greetingOf('  Welcome to the bistro!\n'), 'Welcome to the bistro!');
    assert.equal(await greetingOf('   '), 'Hello, this is Ada. How can I help you today?');
    assert.equal(await greetingOf(null), 'Hello, this is Ada. How can I help you today?');
  });

  it('the channel a widget does not offer is named in the 409', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const chatOnly = await createWidget(t, user, { agent_id: agent.id, mode: 'chat' });
    const voiceOnly = await createWidget(t, user, { agent_id: agent.id, mode: 'voice' });
    const voice = await t.request({ method: 'POST', url: `/v1/widgets/${chatOnly.id}/voice`, payload: {} });
    assert.equal(voice.statusCode, 409);
    assert.equal(voice.json().detail, 'this widget is chat only');
    const chat = await t.request({ method: 'POST', url: `/v1/widgets/${voiceOnly.id}/chat`, payload: { message: 'Hi' } });
    assert.equal(chat.statusCode, 409);
    assert.equal(chat.json().detail, 'this widget is voice only');
  });

  it('a widget chat is recorded as the widget channel, with its widget and visitor', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id });
    const res = await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/chat`, payload: { message: 'Hi', visitor_id: 'v-42' } });
    assert.equal(res.statusCode, 200, res.body);
    const row = await t.platform.db
      .selectFrom('agent_conversations')
      .select(['channel', 'widget_id', 'visitor_id'])
      .where('id', '=', res.json().conversation_id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { channel: 'widget', widget_id: widget.id, visitor_id: 'v-42' });
  });
});
