import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { startFakeOpenAi } from '../../../test/fakes/openai/llm.ts';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';

describe('chat when the language model is unreachable', async () => {
  // Port 9 (discard) on loopback: nothing listens, the connection is refused.
  const t = await buildTestApp({ env: { LLM_BASE_URL: 'http://127.0.0.1:9/v1', LLM_API_KEY: 'sk-test' } });

  it('answers 502 upstream_error, not a 500, and keeps no half conversation', async () => {
    const user = await signUp(t);
    const created = await t.request({
      method: 'POST',
      url: '/v1/agents',
      token: user.accessToken,
      payload: { name: 'Model-backed', llm: { provider: 'openai', model: 'gpt-4o-mini' } },
    });
    assert.equal(created.statusCode, 201, created.body);
    const res = await t.request({ method: 'POST', url: `/v1/agents/${created.json().id}/chat`, token: user.accessToken, payload: { message: 'hello' } });
    assert.equal(res.statusCode, 502, res.body);
    assert.equal(res.json().code, 'upstream_error');
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    const stored = await t.platform.db.selectFrom('agent_conversations').select('id').where('agent_id', '=', created.json().id).execute();
    assert.equal(stored.length, 0);
  });
});

describe('chat with an agent on the openai provider (fake Chat Completions server)', async () => {
  const fake = await startFakeOpenAi({ apiKey: 'sk-test' });
  const hits: Array<{ url: string; body: string }> = [];
  const fnServer = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c;
    });
    req.on('end', () => {
      hits.push({ url: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"shipped"}');
    });
  });
  await new Promise<void>((resolve) => fnServer.listen(0, '127.0.0.1', resolve));
  const fnUrl = `http://127.0.0.1:${(fnServer.address() as AddressInfo).port}/orders`;
  const t = await buildTestApp({ env: { LLM_BASE_URL: fake.url, LLM_API_KEY: 'sk-test', LLM_MODEL: 'gpt-4o-mini' } });
  after(async () => {
    await fake.close();
    await new Promise<void>((resolve) => fnServer.close(() => resolve()));
  });

  it('runs the tool loop through the API: knowledge search, a signed function call, then the streamed reply', async () => {
    const user = await signUp(t);
    const kb = (await t.request({ method: 'POST', url: '/v1/knowledge-base', token: user.accessToken, payload: { name: 'Shipping' } })).json();
    await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources`, token: user.accessToken, payload: { type: 'text', title: 'Shipping', text: 'Orders ship within two business days from Lisbon.' } });
    const agent = (
      await t.request({
        method: 'POST',
        url: '/v1/agents',
        token: user.accessToken,
        payload: {
          name: 'Shop',
          prompt: 'You help customers of {{shop}}.',
          llm: { provider: 'openai', model: 'gpt-4o-mini', temperature: 0.2 },
          knowledge_base_ids: [kb.id],
          transfer_number: '+15550100200',
          functions: [{ name: 'check_order', description: 'Check an order', url: fnUrl, parameters: { type: 'object', properties: { order_id: { type: 'string' } } } }],
        },
      })
    ).json();
    fake.requests.length = 0;
    fake.reply(
      { tool_calls: [{ name: 'search_knowledge_base', arguments: { query: 'shipping time' } }] },
      { tool_calls: [{ name: 'check_order', arguments: { order_id: 'A-17' } }] },
      { content: 'Your order A-17 has shipped; orders leave Lisbon within two business days.' },
    );
    const res = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/chat`, token: user.accessToken, payload: { message: 'Where is my order A-17?', variables: { shop: 'Lisbon Boots' } } });
    assert.equal(res.statusCode, 200, res.body);
    const reply = res.json();
    assert.equal(reply.reply, 'Your order A-17 has shipped; orders leave Lisbon within two business days.');
    assert.deepEqual(
      reply.actions.map((a: { type: string; name?: string; results?: number }) => [a.type, a.name ?? a.results]),
      [
        ['search_knowledge_base', 1],
        ['function_call', 'check_order'],
      ],
    );
    assert.equal(fake.requests.length, 3);
    const first = fake.requests[0].body;
    assert.equal(first.model, 'gpt-4o-mini');
    assert.equal(first.stream, true);
    assert.match(first.messages[0].content, /You help customers of Lisbon Boots\./);
    assert.deepEqual(first.tools.map((x: { function: { name: string } }) => x.function.name).sort(), ['check_order', 'end_call', 'search_knowledge_base', 'transfer_call']);
    assert.match(JSON.stringify(fake.requests[1].body.messages.at(-1)), /two business days/);
    assert.deepEqual(JSON.parse(hits.at(-1)!.body).arguments, { order_id: 'A-17' });

    // A built-in agent on the same server never reaches the model server.
    const builtin = (await t.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: { name: 'Offline' } })).json();
    const offline = await t.request({ method: 'POST', url: `/v1/agents/${builtin.id}/chat`, token: user.accessToken, payload: { message: 'hello' } });
    assert.equal(offline.statusCode, 200, offline.body);
    assert.equal(fake.requests.length, 3);
  });
});
