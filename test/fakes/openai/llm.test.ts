// The fake server must behave like the real API for the adapter tests to mean anything: these
// check its wire format and its validation through the real SDK and raw HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { type FakeOpenAiServer, startFakeOpenAi } from './llm.ts';

describe('fake OpenAI server', () => {
  let server: FakeOpenAiServer;
  let client: OpenAI;
  before(async () => {
    server = await startFakeOpenAi({ apiKey: 'sk-fake' });
    client = new OpenAI({ baseURL: server.url, apiKey: 'sk-fake', maxRetries: 0 });
  });
  after(() => server.close());

  it('answers a non-streaming completion with tool calls the SDK parses', async () => {
    server.reply({ tool_calls: [{ name: 'lookup', arguments: { id: 7 }, id: 'call_1' }] });
    const completion = await client.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
    });
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.model, 'gpt-x');
    assert.equal(completion.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(completion.choices[0].message.tool_calls, [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"id":7}' } }]);
  });

  it('streams SSE chunks with split content and tool-call argument fragments, then [DONE]', async () => {
    server.reply({ content: 'Hello there, friend', tool_calls: [{ name: 'lookup', arguments: { query: 'opening hours' }, id: 'call_2' }] });
    const res = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-fake', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-x', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const events = (await res.text()).split('\n\n').filter(Boolean);
    assert.equal(events.at(-1), 'data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, '')));
    const deltas = chunks.map((c) => c.choices[0].delta);
    assert.equal(deltas.map((d) => d.content ?? '').join(''), 'Hello there, friend');
    assert.ok(deltas.filter((d) => d.content).length > 1);
    const fragments = deltas.flatMap((d) => d.tool_calls ?? []);
    assert.equal(fragments[0].id, 'call_2');
    assert.equal(fragments[0].function.name, 'lookup');
    assert.ok(fragments.length > 2);
    assert.ok(fragments.slice(1).every((f) => f.index === 0 && f.id === undefined));
    assert.equal(fragments.map((f) => f.function.arguments).join(''), '{"query":"opening hours"}');
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls');
  });

  it('rejects a tool message that answers no tool call, as the real API does', async () => {
    await assert.rejects(
      client.chat.completions.create({
        model: 'gpt-x',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'call_nope', content: '{}' },
        ],
      }),
      (e: unknown) => e instanceof OpenAI.BadRequestError,
    );
  });

  it('rejects a strict json_schema whose required list misses a property', async () => {
    await assert.rejects(
      client.chat.completions.create({
        model: 'gpt-x',
        messages: [{ role: 'user', content: 'hi' }],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'x', strict: true, schema: { type: 'object', properties: { a: { type: 'string' } }, required: [], additionalProperties: false } },
        },
      }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && /required/.test(e.message),
    );
  });

  it('rejects a wrong API key with 401 and records the request', async () => {
    const bad = new OpenAI({ baseURL: server.url, apiKey: 'sk-other', maxRetries: 0 });
    await assert.rejects(bad.chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => e instanceof OpenAI.AuthenticationError);
    assert.equal(server.requests.at(-1)!.headers.authorization, 'Bearer sk-other');
  });
});
