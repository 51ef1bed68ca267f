// The openai adapter through the real `openai` SDK against the local fake Chat Completions server,
// driven by the dialogue engine (knowledge search and function invocation are test doubles).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type FakeOpenAiServer, startFakeOpenAi } from '../../../test/fakes/openai/llm.ts';
import { createDialogueEngine } from '../../engine/engine.ts';
import { appointmentBooking, support } from '../../engine/fixtures/agents.ts';
import { inMemoryKnowledge, recordingInvoker } from '../../engine/fixtures/doubles.ts';
import { FIXTURE_NOW } from '../../engine/fixtures/extraction-cases.ts';
import { type EngineAgent, LlmError } from '../../ports/llm.ts';
import { manualClock } from '../../platform/clock.ts';
import { createLlm } from './index.ts';
import { createOpenAiLlm, MAX_TOOL_ROUNDS } from './openai.ts';

const API_KEY = 'sk-test-123';

describe('openai LLM adapter against the fake Chat Completions server', () => {
  let server: FakeOpenAiServer;
  before(async () => {
    server = await startFakeOpenAi({ apiKey: API_KEY });
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  const openAiAgent = (agent: EngineAgent): EngineAgent => ({ ...agent, llm: { provider: 'openai', model: 'gpt-4.1-mini', temperature: 0.4 } });

  function setup(template = support, behaviours = template.behaviours) {
    const knowledge = inMemoryKnowledge(template.passages);
    const invoker = recordingInvoker(behaviours);
    const llm = createOpenAiLlm({ baseUrl: server.url, apiKey: API_KEY, model: 'server-default', clock: manualClock(FIXTURE_NOW), maxRetries: 0 });
    return { engine: createDialogueEngine({ llm, knowledge, functions: invoker }), knowledge, invoker };
  }

  it('streams a plain reply and sends the prompt, history, tools and model', async () => {
    server.reply({ content: 'Hello Dana! Our salon opens at nine on Tuesdays.' });
    const { engine } = setup(appointmentBooking);
    const agent = openAiAgent(appointmentBooking.agent);
    const deltas: string[] = [];
    const result = await engine.respond({
      workspaceId: 'ws_1',
      agent,
      history: [engine.greet(agent, { customer_name: 'Dana' })],
      userText: 'When do you open on Tuesday?',
      variables: { customer_name: 'Dana' },
      onReplyDelta: (d) => deltas.push(d),
    });
    assert.deepEqual(result, { reply: 'Hello Dana! Our salon opens at nine on Tuesdays.', actions: [], ended: false });
    assert.ok(deltas.length > 1, 'the reply arrives in several streamed fragments');
    assert.equal(deltas.join(''), result.reply);

    assert.equal(server.requests.length, 1);
    const req = server.requests[0];
    assert.equal(req.path, '/v1/chat/completions');
    assert.equal(req.headers.authorization, `Bearer ${API_KEY}`);
    assert.equal(req.body.model, 'gpt-4.1-mini');
    assert.equal(req.body.stream, true);
    assert.equal(req.body.temperature, 0.4);
    assert.equal(req.body.tool_choice, 'auto');
    const [system, greeting, user] = req.body.messages;
    assert.equal(system.role, 'system');
    assert.ok(system.content.startsWith('You book appointments for Glow Salon.'));
    assert.ok(system.content.includes('The caller is Dana.'), 'variables substituted in the prompt');
    assert.ok(system.content.includes('Today is 2026-11-23.'));
    assert.deepEqual(greeting, { role: 'assistant', content: 'Hi Dana, thanks for calling Glow Salon. Would you like to book an appointment?' });
    assert.deepEqual(user, { role: 'user', content: 'When do you open on Tuesday?' });
    // No transfer_number: no transfer tool. A knowledge base: the search tool. The agent's function with its schema.
    assert.deepEqual(
      req.body.tools.map((t: { function: { name: string } }) => t.function.name),
      ['end_call', 'search_knowledge_base', 'book_appointment'],
    );
    const booking = req.body.tools.find((t: { function: { name: string } }) => t.function.name === 'book_appointment');
    assert.deepEqual(booking, {
      type: 'function',
      function: { name: 'book_appointment', description: appointmentBooking.agent.functions[0].description, parameters: appointmentBooking.agent.functions[0].parameters },
    });
  });

  it('runs the tool loop: knowledge search, then a function, then the spoken answer', async () => {
    server.reply(
      { tool_calls: [{ name: 'search_knowledge_base', arguments: { query: 'router blinking red' }, id: 'call_kb' }] },
      { content: 'Let me check for outages. ', tool_calls: [{ name: 'check_outage', arguments: { zip_code: '94107' }, id: 'call_fn' }] },
      { content: 'Unplug the router for 30 seconds; there is no outage in 94107.' },
    );
    const { engine, invoker, knowledge } = setup();
    const deltas: string[] = [];
    const result = await engine.respond({
      workspaceId: 'ws_1',
      agent: openAiAgent(support.agent),
      history: [],
      userText: 'My router blinks red, zip 94107',
      variables: {},
      onReplyDelta: (d) => deltas.push(d),
    });
    // What was said before the function call is part of the turn, as it was already streamed.
    assert.equal(result.reply, 'Let me check for outages. Unplug the router for 30 seconds; there is no outage in 94107.');
    assert.equal(deltas.join(''), 'Let me check for outages. Unplug the router for 30 seconds; there is no outage in 94107.');
    assert.deepEqual(result.actions, [
      { type: 'search_knowledge_base', query: 'router blinking red', results: 1 },
      {
        type: 'function_call',
        name: 'check_outage',
        arguments: { zip_code: '94107' },
        result: { status: 200, body: { status: 'There is no outage reported for 94107.' }, duration_ms: 12 },
      },
    ]);
    assert.deepEqual(invoker.calls, [{ name: 'check_outage', url: 'https://zapp.example.com/api/outages', args: { zip_code: '94107' } }]);
    assert.deepEqual(knowledge.searches.map((s) => s.knowledgeBaseIds), [['kb_zapp']]);

    assert.equal(server.requests.length, 3);
    const second = server.requests[1].body.messages.slice(-2);
    assert.deepEqual(second[0], {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_kb', type: 'function', function: { name: 'search_knowledge_base', arguments: '{"query":"router blinking red"}' } }],
    });
    assert.equal(second[1].role, 'tool');
    assert.equal(second[1].tool_call_id, 'call_kb');
    assert.match(JSON.parse(second[1].content).results[0].text, /blinks red/);
    const third = server.requests[2].body.messages.slice(-2);
    assert.equal(third[0].content, 'Let me check for outages. ');
    assert.deepEqual(JSON.parse(third[1].content), { status: 200, body: { status: 'There is no outage reported for 94107.' }, duration_ms: 12 });
    assert.equal(third[1].tool_call_id, 'call_fn');
  });

  it('executes parallel tool calls of one streamed message, each answered by its own tool message', async () => {
    server.reply(
      {
        tool_calls: [
          { name: 'check_outage', arguments: { zip_code: '10001' }, id: 'call_a' },
          { name: 'check_outage', arguments: { zip_code: '94107' }, id: 'call_b' },
        ],
      },
      { content: 'No outages in either area.' },
    );
    const { engine, invoker } = setup();
    const result = await engine.respond({ workspaceId: 'ws_1', agent: openAiAgent(support.agent), history: [], userText: 'Outages in 10001 or 94107?', variables: {} });
    assert.equal(result.reply, 'No outages in either area.');
    assert.deepEqual(invoker.calls.map((c) => c.args), [{ zip_code: '10001' }, { zip_code: '94107' }]);
    const tools = server.requests[1].body.messages.filter((m: { role: string }) => m.role === 'tool');
    assert.deepEqual(tools.map((m: { tool_call_id: string }) => m.tool_call_id), ['call_a', 'call_b']);
  });

  it('ends the call in one round when the model says goodbye together with end_call', async () => {
    server.reply({ content: 'Thanks for calling, goodbye!', tool_calls: [{ name: 'end_call', arguments: { reason: 'caller_goodbye' } }] });
    const { engine } = setup();
    const result = await engine.respond({ workspaceId: 'ws_1', agent: openAiAgent(support.agent), history: [], userText: 'that is all, bye', variables: {} });
    assert.deepEqual(result, { reply: 'Thanks for calling, goodbye!', actions: [{ type: 'end_call', reason: 'caller_goodbye' }], ended: true });
    assert.equal(server.requests.length, 1);
  });

  it('transfers, then asks for the spoken line with tool_choice "none"', async () => {
    server.reply(
      { tool_calls: [{ name: 'transfer_call', arguments: { reason: 'wants a technician' } }] },
      { content: 'Connecting you to a technician now.' },
    );
    const { engine } = setup();
    const result = await engine.respond({ workspaceId: 'ws_1', agent: openAiAgent(support.agent), history: [], userText: 'Get me a technician', variables: {} });
    assert.deepEqual(result, {
      reply: 'Connecting you to a technician now.',
      actions: [{ type: 'transfer_call', to: '+15550100400', reason: 'wants a technician' }],
      ended: true,
    });
    assert.equal(server.requests[1].body.tool_choice, 'none');
    assert.ok(server.requests[0].body.tools.some((t: { function: { name: string } }) => t.function.name === 'transfer_call'));
  });

  it(`stops calling tools after ${MAX_TOOL_ROUNDS} rounds`, async () => {
    server.reply(...Array.from({ length: MAX_TOOL_ROUNDS }, () => (req: { body: { tool_choice?: string } }) =>
      req.body.tool_choice === 'none' ? { content: 'Sorry, I could not finish that.' } : { tool_calls: [{ name: 'check_outage', arguments: { zip_code: '10001' } }] },
    ));
    const { engine, invoker } = setup();
    const result = await engine.respond({ workspaceId: 'ws_1', agent: openAiAgent(support.agent), history: [], userText: 'check again and again', variables: {} });
    assert.equal(server.requests.length, MAX_TOOL_ROUNDS);
    assert.equal(invoker.calls.length, MAX_TOOL_ROUNDS - 1);
    assert.equal(server.requests.at(-1)!.body.tool_choice, 'none');
    assert.equal(result.reply, 'Sorry, I could not finish that.');
  });

  it('answers a tool call with bad JSON arguments or an unknown name with an error, invoking nothing', async () => {
    server.reply(
      {
        tool_calls: [
          { name: 'check_outage', arguments: '{"zip_code": "100', id: 'call_bad' },
          { name: 'delete_everything', arguments: {}, id: 'call_unknown' },
        ],
      },
      { content: 'Sorry, something went wrong.' },
    );
    const { engine, invoker } = setup();
    const result = await engine.respond({ workspaceId: 'ws_1', agent: openAiAgent(support.agent), history: [], userText: 'check', variables: {} });
    assert.deepEqual(invoker.calls, []);
    const tools = server.requests[1].body.messages.filter((m: { role: string }) => m.role === 'tool');
    assert.deepEqual(JSON.parse(tools[0].content), { error: 'arguments were not a JSON object' });
    assert.deepEqual(JSON.parse(tools[1].content), { error: 'the agent has no function named delete_everything' });
    assert.deepEqual(result.actions, [
      { type: 'function_call', name: 'delete_everything', arguments: {}, result: { error: 'the agent has no function named delete_everything' } },
    ]);
  });

  it('ends with agent_end_call when the reply says one of the end_call_phrases', async () => {
    server.reply({ content: 'Thank you, we will be in touch. Have a wonderful day.' });
    const { engine } = setup();
    const agent = { ...openAiAgent(support.agent), end_call_phrases: ['have a wonderful day'] };
    const result = await engine.respond({ workspaceId: 'ws_1', agent, history: [], userText: 'ok', variables: {} });
    assert.deepEqual(result.actions, [{ type: 'end_call', reason: 'agent_end_call' }]);
    assert.ok(server.requests[0].body.messages[0].content.includes('"have a wonderful day"'));
  });

  it('uses the server model for agents on the built-in provider', async () => {
    server.reply({ content: 'Hi.' });
    const { engine } = setup();
    await engine.respond({ workspaceId: 'ws_1', agent: support.agent, history: [], userText: 'hi', variables: {} });
    assert.equal(server.requests[0].body.model, 'server-default');
  });

  it('extracts with a strict json_schema response format and coerces the answer', async () => {
    server.reply({ content: JSON.stringify({ service: 'pedicure', appointment_date: '2026-11-27', appointment_time: '15:00', email: null }) });
    const { engine } = setup(appointmentBooking);
    const agent = openAiAgent(appointmentBooking.agent);
    const transcript = [
      { role: 'agent' as const, text: 'Would you like to book?' },
      { role: 'user' as const, text: 'A pedicure next Friday at 3pm' },
    ];
    const out = await engine.extract(agent, transcript);
    // "pedicure" is not one of the enum values: null, never an invented value.
    assert.deepEqual(out, { service: null, appointment_date: '2026-11-27', appointment_time: '15:00', email: null });
    const req = server.requests[0].body;
    assert.equal(req.stream, undefined);
    assert.equal(req.model, 'gpt-4.1-mini');
    assert.deepEqual(req.response_format, {
      type: 'json_schema',
      json_schema: {
        name: 'extraction',
        strict: true,
        schema: {
          type: 'object',
          properties: {
            service: { type: ['string', 'null'], enum: ['haircut', 'color', 'manicure', null], description: 'The service booked' },
            appointment_date: { type: ['string', 'null'], description: 'Date of the appointment' },
            appointment_time: { type: ['string', 'null'], description: 'Time of the appointment' },
            email: { type: ['string', 'null'], description: "The caller's email address" },
          },
          required: ['service', 'appointment_date', 'appointment_time', 'email'],
          additionalProperties: false,
        },
      },
    });
    assert.equal(req.messages[1].content, 'agent: Would you like to book?\nuser: A pedicure next Friday at 3pm');
  });

  it('coerces numbers and booleans given as strings and drops wrong types', async () => {
    server.reply({ content: JSON.stringify({ n: '1,200', b: 'yes', s: 42, extra: 'ignored' }) });
    const llm = createOpenAiLlm({ baseUrl: server.url, apiKey: API_KEY, model: 'm', maxRetries: 0 });
    const out = await llm.extract({
      agent: support.agent,
      fields: [
        { name: 'n', type: 'number', description: 'n' },
        { name: 'b', type: 'boolean', description: 'b' },
        { name: 's', type: 'string', description: 's' },
      ],
      transcript: [{ role: 'user', text: 'x' }],
    });
    assert.deepEqual(out, { n: 1200, b: true, s: '42' });
  });

  it('fails with LlmError on a rejected API key', async () => {
    const llm = createOpenAiLlm({ baseUrl: server.url, apiKey: 'sk-wrong', model: 'm', maxRetries: 0 });
    const engine = createDialogueEngine({ llm, knowledge: inMemoryKnowledge([]), functions: recordingInvoker({}) });
    await assert.rejects(
      engine.respond({ workspaceId: 'ws_1', agent: support.agent, history: [], userText: 'hi', variables: {} }),
      (e: unknown) => e instanceof LlmError && /401/.test(e.message),
    );
  });

  it('createLlm picks the built-in engine without LLM_BASE_URL and the openai adapter with it', () => {
    assert.equal(createLlm({ model: 'gpt-4o-mini' }).kind, 'builtin');
    assert.equal(createLlm({ baseUrl: server.url, apiKey: API_KEY, model: 'gpt-4o-mini' }).kind, 'openai');
  });
});
