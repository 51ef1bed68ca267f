import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';
import { createKbAgent, createWidget } from './test-helpers.ts';

// The public widget endpoints: config, chat (the agent's knowledge base), the Origin rule and CORS,
// limits, embed.js caching, the branded preview and the voice session.

const t = await buildTestApp();
const corsHeaders = (headers: Record<string, unknown>) => Object.keys(headers).filter((h) => h.startsWith('access-control-'));

describe('public widget endpoints', () => {
  it('config: agent name, mode, theme and greeting, never the prompt', async () => {
    const user = await signUp(t);
    const agent = await createKbAgent(t, user);
    const widget = await createWidget(t, user, { agent_id: agent.id, mode: 'both', theme: { title: 'Ask Fern', primary_color: '#0e7490' } });
    const res = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config` });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      id: widget.id,
      agent_name: 'Fern',
      mode: 'both',
      theme: { title: 'Ask Fern', primary_color: '#0e7490', position: 'bottom-right' },
      // The agent's first_message needs {{company}}, which a visitor cannot give: the default line.
      greeting: 'Hello, this is Fern. How can I help you today?',
    });
    assert.doesNotMatch(res.body, /SECRET-PROMPT/);
    assert.ok(res.headers['ratelimit-limit'], 'limited per IP like every public route');
    const patched = await t.request({ method: 'PATCH', url: `/v1/widgets/${widget.id}`, ...as(user), payload: { theme: { greeting: 'Welcome to the Blue Fern!' } } });
    assert.equal(patched.statusCode, 200);
    assert.equal((await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config` })).json().greeting, 'Welcome to the Blue Fern!');
    const plain = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id });
    assert.equal((await t.request({ method: 'GET', url: `/v1/widgets/${plain.id}/config` })).json().greeting, 'Hello, this is Ada from the bistro. How can I help?');
    for (const id of ['wdg_00000000000000000000000000', 'nope', 'wdg_\u0000']) {
      const missing = await t.request({ method: 'GET', url: `/v1/widgets/${encodeURIComponent(id)}/config` });
      assert.equal(missing.statusCode, 404, missing.body);
    }
  });

  it('chat: answers from the agent knowledge base and keeps the conversation', async () => {
    const user = await signUp(t);
    const agent = await createKbAgent(t, user);
    const widget = await createWidget(t, user, { agent_id: agent.id });
    const first = await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/chat`, payload: { message: 'When do you open in the morning?', visitor_id: 'v-1' } });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(Object.keys(first.json()).sort(), ['conversation_id', 'ended', 'reply']);
    assert.match(first.json().conversation_id, /^conv_/);
    assert.match(first.json().reply, /nine in the morning/);
    const second = await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/chat`, payload: { message: 'Where do guests park?', conversation_id: first.json().conversation_id } });
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.json().conversation_id, first.json().conversation_id);
    assert.match(second.json().reply, /Elm Street/);
    const stored = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/conversations/${first.json().conversation_id}`, ...as(user) });
    assert.equal(stored.json().messages.length, 5);

    // Another widget of the same agent cannot continue it.
    const otherWidget = await createWidget(t, user, { agent_id: agent.id });
    const foreign = await t.request({ method: 'POST', url: `/v1/widgets/${otherWidget.id}/chat`, payload: { message: 'Hi', conversation_id: first.json().conversation_id } });
    assert.equal(foreign.statusCode, 404);
  });

  it('chat: messages of at most 2,000 characters (422), small bodies (413), no unknown fields', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id });
    const url = `/v1/widgets/${widget.id}/chat`;
    assert.equal((await t.request({ method: 'POST', url, payload: { message: 'x'.repeat(2000) } })).statusCode, 200);
    const long = await t.request({ method: 'POST', url, payload: { message: 'x'.repeat(2001) } });
    assert.equal(long.statusCode, 422);
    assert.equal(long.json().errors[0].path, 'message');
    const empty = await t.request({ method: 'POST', url, payload: { message: '' } });
    assert.equal(empty.statusCode, 422);
    const huge = await t.request({ method: 'POST', url, payload: { message: 'x', padding: 'y'.repeat(20_000) } });
    assert.equal(huge.statusCode, 413, huge.body);
    const unknown = await t.request({ method: 'POST', url, payload: { message: 'hi', variables: { a: 'b' } } });
    assert.equal(unknown.statusCode, 422);
    assert.equal(unknown.json().errors[0].path, 'variables');
    const html = await t.request({ method: 'POST', url, payload: { message: '<img src=x onerror=alert(1)>' } });
    assert.equal(html.statusCode, 200, 'HTML is text like any other; the script renders it as text');
  });

  it('checks Origin against allowed_origins on every public endpoint: 403 without CORS headers, else CORS for that origin', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id, mode: 'both', allowed_origins: ['https://shop.example.com'] });
    const base = `/v1/widgets/${widget.id}`;
    const endpoints = [
      { method: 'GET' as const, url: `${base}/config` },
      { method: 'GET' as const, url: `${base}/embed.js` },
      { method: 'GET' as const, url: `${base}/preview` },
      { method: 'POST' as const, url: `${base}/chat`, payload: { message: 'Hello' } },
      { method: 'POST' as const, url: `${base}/voice`, payload: {} },
    ];
    for (const endpoint of endpoints) {
      const where = `${endpoint.method} ${endpoint.url}`;
      const refused = await t.request({ ...endpoint, headers: { origin: 'https://evil.example.net' } });
      assert.equal(refused.statusCode, 403, `${where}: ${refused.body}`);
      assert.equal(refused.json().code, 'forbidden');
      assert.deepEqual(corsHeaders(refused.headers), [], where);
      const allowed = await t.request({ ...endpoint, headers: { origin: 'https://shop.example.com' } });
      assert.ok(allowed.statusCode < 300, `${where}: ${allowed.statusCode} ${allowed.body}`);
      assert.equal(allowed.headers['access-control-allow-origin'], 'https://shop.example.com', where);
      assert.match(String(allowed.headers.vary), /Origin/, where);
      assert.match(String(allowed.headers['access-control-expose-headers']), /RateLimit-Remaining/, where);
      // No Origin: server-side use, no CORS headers needed.
      const server = await t.request(endpoint);
      assert.ok(server.statusCode < 300, `${where}: ${server.body}`);
      assert.equal(server.headers['access-control-allow-origin'], undefined);
    }
    // The platform's own page (the preview) is same-origin with the API.
    const sameOrigin = await t.request({ method: 'GET', url: `${base}/config`, headers: { origin: 'http://widgets.example.org:8443', host: 'widgets.example.org:8443' } });
    assert.equal(sameOrigin.statusCode, 200, sameOrigin.body);
    assert.equal((await t.request({ method: 'GET', url: `${base}/config`, headers: { origin: 'null' } })).statusCode, 403);

    // Preflight: the same rule.
    const preflight = { method: 'OPTIONS' as const, url: `${base}/chat` };
    const ok = await t.request({ ...preflight, headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
    assert.equal(ok.statusCode, 204, ok.body);
    assert.equal(ok.headers['access-control-allow-origin'], 'https://shop.example.com');
    assert.match(String(ok.headers['access-control-allow-methods']), /POST/);
    assert.match(String(ok.headers['access-control-allow-headers']), /Content-Type/);
    const bad = await t.request({ ...preflight, headers: { origin: 'https://evil.example.net', 'access-control-request-method': 'POST' } });
    assert.equal(bad.statusCode, 403);
    assert.deepEqual(corsHeaders(bad.headers), []);

    // An empty list: any page.
    const patched = await t.request({ method: 'PATCH', url: base, ...as(user), payload: { allowed_origins: [] } });
    assert.equal(patched.statusCode, 200);
    const anyOrigin = await t.request({ method: 'GET', url: `${base}/config`, headers: { origin: 'https://evil.example.net' } });
    assert.equal(anyOrigin.statusCode, 200);
    assert.equal(anyOrigin.headers['access-control-allow-origin'], 'https://evil.example.net');
  });

  it('admits an origin only as a whole: lookalikes that start with an allowed origin are refused', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id, allowed_origins: ['https://shop.example'] });
    for (const origin of ['https://shop.example.evil.net', 'https://shop.examplex', 'https://shop.example:8443', 'http://shop.example']) {
      for (const endpoint of [{ method: 'GET' as const, url: `/v1/widgets/${widget.id}/config` }, { method: 'POST' as const, url: `/v1/widgets/${widget.id}/chat`, payload: { message: 'Hello' } }]) {
        const refused = await t.request({ ...endpoint, headers: { origin } });
        assert.equal(refused.statusCode, 403, `${origin} ${endpoint.method}: ${refused.body}`);
        assert.deepEqual(corsHeaders(refused.headers), []);
      }
    }
    const allowed = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config`, headers: { origin: 'https://shop.example' } });
    assert.equal(allowed.statusCode, 200, allowed.body);
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://shop.example');
  });

  it('refuses the channel a widget does not offer (409)', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const chatOnly = await createWidget(t, user, { agent_id: agent.id, mode: 'chat' });
    const voiceOnly = await createWidget(t, user, { agent_id: agent.id, mode: 'voice' });
    const voice = await t.request({ method: 'POST', url: `/v1/widgets/${chatOnly.id}/voice`, payload: {} });
    assert.equal(voice.statusCode, 409, voice.body);
    assert.equal(voice.json().code, 'invalid_state');
    assert.equal((await t.request({ method: 'POST', url: `/v1/widgets/${voiceOnly.id}/chat`, payload: { message: 'Hi' } })).statusCode, 409);
  });

  it('voice: starts a web voice session of the workspace and answers the voice-session object', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const widget = await createWidget(t, user, { agent_id: agent.id, mode: 'voice' });
    const res = await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/voice`, payload: { visitor_id: 'visitor-7' } });
    assert.equal(res.statusCode, 201, res.body);
    const session = res.json();
    assert.match(session.id, /^vs_/);
    assert.match(session.token, /^mt_/);
    assert.equal(session.transport, 'builtin');
    assert.equal(session.url, 'ws://localhost:3000/v1/media/stream');
    assert.equal(session.agent_id, agent.id);
    assert.equal(session.external_user_id, 'visitor-7');
    assert.deepEqual(session.metadata, { widget_id: widget.id });
    // The workspace's session (and web call), as the owner sees it.
    const owned = await t.request({ method: 'GET', url: `/v1/voice/sessions/${session.id}`, ...as(user) });
    assert.equal(owned.statusCode, 200, owned.body);
    const call = await t.request({ method: 'GET', url: `/v1/calls/${session.call_id}`, ...as(user) });
    assert.equal(call.json().direction, 'web');
    const anonymous = await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/voice`, payload: {} });
    assert.match(anonymous.json().external_user_id, /^anonymous-/);
  });

  it('voice: 402 when the workspace wallet is empty', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id, mode: 'both' });
    await t.platform.db.updateTable('wallets').set({ balance_micros: 0 }).where('workspace_id', '=', user.workspaceId).execute();
    const res = await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/voice`, payload: {} });
    assert.equal(res.statusCode, 402, res.body);
    assert.equal(res.json().code, 'insufficient_balance');
  });

  it('embed.js: public JavaScript cached a day, with an ETag and 304 on If-None-Match', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id });
    const res = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/embed.js` });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'public, max-age=86400');
    const etag = String(res.headers.etag);
    assert.match(etag, /^"[\w-]+"$/);
    // The whole widget runtime, dependency-free, under 20 KB gzipped.
    assert.match(res.body, /attachShadow\(\{ mode: 'open' \}\)/);
    const gzipped = gzipSync(res.rawPayload, { level: 9 }).length;
    assert.ok(gzipped < 20 * 1024, `embed.js is ${gzipped} bytes gzipped`);
    const cached = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/embed.js`, headers: { 'if-none-match': etag } });
    assert.equal(cached.statusCode, 304);
    assert.equal(cached.body, '');
    assert.equal(cached.headers.etag, etag);
    const weak = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/embed.js`, headers: { 'if-none-match': `"other", W/${etag}` } });
    assert.equal(weak.statusCode, 304);
    const stale = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/embed.js`, headers: { 'if-none-match': '"stale"' } });
    assert.equal(stale.statusCode, 200);
  });

  it('preview: the widget on a neutral page, under the branding of the Host it is served on (escaped)', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id, theme: { title: 'Ask <b>us</b>' } });
    const plain = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/preview`, headers: { host: 'unbranded.example.org' } });
    assert.equal(plain.statusCode, 200, plain.body);
    assert.equal(plain.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(String(plain.headers['content-security-policy']), /script-src 'self' blob:/);
    assert.ok(plain.body.includes(`<script src="/v1/widgets/${widget.id}/embed.js" async></script>`));
    assert.match(plain.body, /Voice Agent Platform/);
    assert.ok(plain.body.includes('Ask &lt;b&gt;us&lt;/b&gt;'));
    assert.ok(!plain.body.includes('<b>us</b>'));

    const domain = `preview-${Math.random().toString(36).slice(2, 8)}.example.com`;
    const owner = await signUp(t);
    const put = await t.request({ method: 'PUT', url: '/v1/branding', ...as(owner), payload: { domain, name: 'Acme "Voice" <Co>', logo_url: 'https://cdn.example.com/logo.png?a=1&b=2', primary_color: '#0e7490', hide_powered_by: true } });
    assert.equal(put.statusCode, 200, put.body);
    const branded = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/preview`, headers: { host: `${domain.toUpperCase()}:8080` } });
    assert.equal(branded.statusCode, 200);
    assert.ok(branded.body.includes('Acme &quot;Voice&quot; &lt;Co&gt;'), branded.body);
    assert.ok(branded.body.includes('src="https://cdn.example.com/logo.png?a=1&amp;b=2"'));
    assert.ok(branded.body.includes('--brand: #0e7490'));
    assert.doesNotMatch(branded.body, /Powered by/);
  });

  it("a widget whose agent was deleted stops answering (404)", async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const widget = await createWidget(t, user, { agent_id: agent.id });
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/agents/${agent.id}`, ...as(user) })).statusCode, 204);
    assert.equal((await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config` })).statusCode, 404);
    assert.equal((await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/chat`, payload: { message: 'Hi' } })).statusCode, 404);
  });
});

describe('public widget endpoints: limits and the global CORS setting', async () => {
  const limited = await buildTestApp({ env: { RATE_LIMIT_IP_PER_MIN: '30', CORS_ORIGINS: 'https://dashboard.example.com' } });

  it('30 requests a minute per IP across the public widget endpoints, then 429 with Retry-After', async () => {
    const owner = await signUp(limited, { remoteAddress: () => `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` });
    const widget = await createWidget(limited, owner, { agent_id: (await createCallAgent(limited, owner)).id });
    const remoteAddress = '203.0.113.77';
    for (let i = 0; i < 30; i++) {
      const url = i % 2 === 0 ? `/v1/widgets/${widget.id}/config` : `/v1/widgets/${widget.id}/embed.js`;
      const res = await limited.request({ method: 'GET', url, remoteAddress });
      assert.equal(res.statusCode, 200, `request ${i + 1}: ${res.body}`);
    }
    const over = await limited.request({ method: 'POST', url: `/v1/widgets/${widget.id}/chat`, remoteAddress, payload: { message: 'Hi' } });
    assert.equal(over.statusCode, 429, over.body);
    assert.equal(over.json().code, 'rate_limited');
    assert.ok(Number(over.headers['retry-after']) > 0);
    const elsewhere = await limited.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config`, remoteAddress: '203.0.113.78' });
    assert.equal(elsewhere.statusCode, 200, 'another IP has its own bucket');
  });

  it('the app CORS origins do not open a widget, and keep working on the other routes', async () => {
    const owner = await signUp(limited, { remoteAddress: () => `10.8.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` });
    const widget = await createWidget(limited, owner, { agent_id: (await createCallAgent(limited, owner)).id, allowed_origins: ['https://shop.example.com'] });
    const dashboard = { origin: 'https://dashboard.example.com' };
    const refused = await limited.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config`, headers: dashboard, remoteAddress: '203.0.113.90' });
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(corsHeaders(refused.headers), []);
    const preflight = await limited.request({ method: 'OPTIONS', url: `/v1/widgets/${widget.id}/chat`, headers: { ...dashboard, 'access-control-request-method': 'POST' }, remoteAddress: '203.0.113.91' });
    assert.equal(preflight.statusCode, 403);
    assert.deepEqual(corsHeaders(preflight.headers), []);
    const allowed = await limited.request({ method: 'GET', url: `/v1/widgets/${widget.id}/config`, headers: { origin: 'https://shop.example.com' }, remoteAddress: '203.0.113.92' });
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://shop.example.com');
    // The rest of the API still answers the configured origins (@fastify/cors).
    const health = await limited.request({ method: 'GET', url: '/v1/health', headers: dashboard });
    assert.equal(health.headers['access-control-allow-origin'], 'https://dashboard.example.com');
    const apiPreflight = await limited.request({ method: 'OPTIONS', url: '/v1/agents', headers: { ...dashboard, 'access-control-request-method': 'POST' } });
    assert.equal(apiPreflight.statusCode, 204);
    assert.equal(apiPreflight.headers['access-control-allow-origin'], 'https://dashboard.example.com');
  });
});
