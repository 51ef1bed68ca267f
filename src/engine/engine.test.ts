import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manualClock } from '../platform/clock.ts';
import { createBuiltinLlm } from '../providers/llm/builtin.ts';
import { createDialogueEngine } from './engine.ts';
import { appointmentBooking, receptionist, support } from './fixtures/agents.ts';
import { inMemoryKnowledge, recordingInvoker } from './fixtures/doubles.ts';
import { FIXTURE_NOW } from './fixtures/extraction-cases.ts';
import type { EngineAgent } from '../ports/llm.ts';

function engineFor(template: typeof receptionist, overrides: Partial<Record<string, Parameters<typeof recordingInvoker>[0][string]>> = {}) {
  const knowledge = inMemoryKnowledge(template.passages);
  const invoker = recordingInvoker({ ...template.behaviours, ...overrides } as Parameters<typeof recordingInvoker>[0]);
  const engine = createDialogueEngine({ llm: createBuiltinLlm({ clock: manualClock(FIXTURE_NOW) }), knowledge, functions: invoker });
  return { engine, knowledge, invoker };
}

const ask = (agent: EngineAgent, userText: string, variables: Record<string, string> = {}) => ({
  workspaceId: 'ws_1',
  agent,
  history: [],
  userText,
  variables,
});

describe('dialogue engine with the built-in LLM', () => {
  it('greets with first_message, substituting variables and keeping unknown ones visible', () => {
    const { engine } = engineFor(receptionist);
    const agent = { ...receptionist.agent, first_message: 'Hi {{ name }}, your code is {{code}} and {{missing}}.' };
    assert.deepEqual(engine.greet(agent, { name: 'Lee', code: '42' }), { role: 'agent', text: 'Hi Lee, your code is 42 and {{missing}}.' });
  });

  it('greets with a default line naming the agent when it has no first_message', () => {
    const { engine } = engineFor(receptionist);
    assert.equal(engine.greet({ ...receptionist.agent, first_message: null }, {}).text, 'Hello, this is Bright Smile Dental Reception. How can I help you today?');
  });

  it('says it cannot transfer when the agent has no transfer_number, and takes no action', async () => {
    const { engine } = engineFor(receptionist);
    const result = await engine.respond(ask({ ...receptionist.agent, transfer_number: null }, 'Let me talk to a human please'));
    assert.deepEqual(result.actions, []);
    assert.equal(result.ended, false);
    assert.match(result.reply, /can't transfer you/);
  });

  it('transfers on a bare "representative" and on "operator please"', async () => {
    const { engine } = engineFor(receptionist);
    for (const text of ['Representative.', 'operator please', 'I need to speak with someone']) {
      const result = await engine.respond(ask(receptionist.agent, text));
      assert.deepEqual(result.actions, [{ type: 'transfer_call', to: '+15550100200', reason: 'caller asked for a human' }], text);
      assert.equal(result.ended, true);
    }
  });

  it('takes a plain yes to its transfer offer as a transfer, but not a new request that sounds agreeable', async () => {
    const { engine } = engineFor(receptionist);
    const offer = [{ role: 'agent' as const, text: "I'm sorry, I don't have that information. I can connect you with a member of our team if you like." }];
    for (const text of ['yes please', 'Sure', 'ok', 'Yes, that would be great', 'I would like that, thank you']) {
      const result = await engine.respond({ ...ask({ ...receptionist.agent, knowledge_base_ids: [] }, text), history: offer });
      assert.deepEqual(result.actions, [{ type: 'transfer_call', to: '+15550100200', reason: 'caller asked for a human' }], text);
    }
    for (const text of ['I would like to leave a message for Dr. Chen', 'Yes, and what are your opening hours on Saturday?']) {
      const result = await engine.respond({ ...ask({ ...receptionist.agent, knowledge_base_ids: [] }, text), history: offer });
      assert.ok(!result.actions.some((a) => a.type === 'transfer_call'), `${text}: ${JSON.stringify(result)}`);
    }
  });

  it('ends on goodbye phrases but not on a question that mentions one', async () => {
    const { engine } = engineFor(receptionist);
    for (const text of ['goodbye', 'ok thanks, bye', "That's all I needed.", 'nothing else, have a nice day']) {
      const result = await engine.respond(ask(receptionist.agent, text));
      assert.deepEqual(result.actions, [{ type: 'end_call', reason: 'caller_goodbye' }], text);
      assert.equal(result.ended, true);
    }
    const question = await engine.respond(ask(receptionist.agent, 'Is that all the insurance plans you take?'));
    assert.equal(question.ended, false);
  });

  it('does not take a request for help from someone, or a longer remark, for a transfer or a goodbye', async () => {
    const { engine } = engineFor(receptionist);
    for (const text of ['I need someone to fix my crown', "That's it, I also want to move my appointment to Friday morning"]) {
      const result = await engine.respond(ask(receptionist.agent, text));
      assert.deepEqual(result.actions.filter((a) => a.type !== 'search_knowledge_base'), [], text);
      assert.equal(result.ended, false, text);
    }
  });

  it('ends on one of the agent end_call_phrases', async () => {
    const { engine } = engineFor(receptionist);
    const agent = { ...receptionist.agent, end_call_phrases: ['please remove me from your list'] };
    const result = await engine.respond(ask(agent, 'Please remove me from your list.'));
    assert.deepEqual(result.actions, [{ type: 'end_call', reason: 'caller_goodbye' }]);
  });

  it('reports a failing function as an error action and apologises', async () => {
    const { engine, invoker } = engineFor(support, { check_outage: () => new Error('connect ECONNREFUSED') });
    const result = await engine.respond(ask(support.agent, 'Is there an outage in zip code 10001? Please check.'));
    assert.deepEqual(result.actions, [
      { type: 'function_call', name: 'check_outage', arguments: { zip_code: '10001' }, result: { error: 'connect ECONNREFUSED' } },
    ]);
    assert.equal(invoker.calls.length, 1);
    assert.match(result.reply, /couldn't check outage/);
  });

  it('reports a non-2xx function answer in the reply', async () => {
    const { engine } = engineFor(support, { check_outage: () => ({ status: 503, body: { error: 'down' } }) });
    const result = await engine.respond(ask(support.agent, 'Can you check for an outage at 10001?'));
    assert.equal(result.actions[0].type, 'function_call');
    assert.match(result.reply, /error \(503\)/);
  });

  it('asks for missing required arguments before calling, then calls with all of them', async () => {
    const { engine, invoker } = engineFor(appointmentBooking);
    const agent = appointmentBooking.agent;
    const first = await engine.respond(ask(agent, 'I want to book a manicure appointment'));
    assert.equal(first.reply, 'To do that, I need the date and time. What is the date?');
    assert.deepEqual(first.actions, []);
    const history = [
      { role: 'user' as const, text: 'I want to book a manicure appointment' },
      { role: 'agent' as const, text: first.reply },
    ];
    const second = await engine.respond({ ...ask(agent, 'December 5th at 10:30 am'), history });
    assert.deepEqual(invoker.calls.map((c) => c.args), [{ service: 'manicure', date: '2026-12-05', time: '10:30' }]);
    assert.equal(second.reply, 'Your manicure is booked for 2026-12-05 at 10:30.');
  });

  it('treats a yes to an offer as a request for the offered function, and lets the caller drop it', async () => {
    const { engine, invoker } = engineFor(appointmentBooking);
    const agent = appointmentBooking.agent;
    const greeting = engine.greet(agent, appointmentBooking.variables);
    const yes = await engine.respond({ ...ask(agent, 'Yes please', appointmentBooking.variables), history: [greeting] });
    assert.equal(yes.reply, 'To do that, I need the service, date and time. Which service would you like: haircut, color or manicure?');
    const history = [greeting, { role: 'user' as const, text: 'Yes please' }, { role: 'agent' as const, text: yes.reply }];
    const color = await engine.respond({ ...ask(agent, 'Color, tomorrow at 11am'), history });
    assert.equal(color.reply, 'Your color is booked for 2026-11-24 at 11:00.');
    assert.deepEqual(invoker.calls.map((c) => c.args), [{ service: 'color', date: '2026-11-24', time: '11:00' }]);

    const dropped = await engine.respond({ ...ask(agent, 'Never mind'), history });
    assert.equal(dropped.reply, 'No problem. Is there anything else I can help you with?');
    assert.deepEqual(dropped.actions, []);
  });

  it('answers from the most relevant sentence of the top passage and records the search', async () => {
    const { engine, knowledge } = engineFor(support);
    const result = await engine.respond(ask(support.agent, 'When are bills issued?'));
    assert.equal(result.reply, 'Bills are issued on the first day of each month.');
    assert.deepEqual(result.actions, [{ type: 'search_knowledge_base', query: 'When are bills issued?', results: 1 }]);
    assert.deepEqual(knowledge.searches[0].topK, 3);
  });

  it('admits not knowing and offers a transfer when nothing in the knowledge base answers', async () => {
    const { engine } = engineFor(support);
    const result = await engine.respond(ask(support.agent, 'Do you sell gift cards?'));
    assert.equal(result.reply, "I'm sorry, I don't have that information. I can connect you with a member of our team if you like.");
    const yes = await engine.respond({
      ...ask(support.agent, 'Yes please'),
      history: [
        { role: 'user', text: 'Do you sell gift cards?' },
        { role: 'agent', text: result.reply },
      ],
    });
    assert.deepEqual(yes.actions, [{ type: 'transfer_call', to: '+15550100400', reason: 'caller asked for a human' }]);
  });

  it('keeps talking when the knowledge search fails, recording a search with no results', async () => {
    const failing = { search: async () => Promise.reject(new Error('database is down')) };
    const engine = createDialogueEngine({ llm: createBuiltinLlm({ clock: manualClock(FIXTURE_NOW) }), knowledge: failing, functions: recordingInvoker({}) });
    const result = await engine.respond(ask(support.agent, 'When are bills issued?'));
    assert.deepEqual(result.actions, [{ type: 'search_knowledge_base', query: 'When are bills issued?', results: 0 }]);
    assert.match(result.reply, /don't have that information/);
  });

  it('does not search when the agent has no knowledge base', async () => {
    const { engine, knowledge } = engineFor(support);
    const result = await engine.respond(ask({ ...support.agent, knowledge_base_ids: [] }, 'When are bills issued?'));
    assert.deepEqual(knowledge.searches, []);
    assert.deepEqual(result.actions, []);
  });

  it('streams the built-in reply to onReplyDelta once, whole', async () => {
    const { engine } = engineFor(support);
    const deltas: string[] = [];
    const result = await engine.respond({ ...ask(support.agent, 'hello'), onReplyDelta: (d) => deltas.push(d) });
    assert.deepEqual(deltas, [result.reply]);
  });

  it('extracts every field, null when absent, and nothing for an agent without fields', async () => {
    const { engine } = engineFor(receptionist);
    assert.deepEqual(await engine.extract({ ...receptionist.agent, extraction_fields: [] }, [{ role: 'user', text: 'hi' }]), {});
    assert.deepEqual(await engine.extract(receptionist.agent, [{ role: 'user', text: 'hi' }]), {
      caller_name: null,
      callback_phone: null,
      new_patient: null,
    });
  });

  it('extracts only from user turns, never from what the agent said', async () => {
    const { engine } = engineFor(receptionist);
    const out = await engine.extract(receptionist.agent, [
      { role: 'agent', text: 'You can also reach us at (415) 555-0100. My name is Ava.' },
      { role: 'user', text: 'ok' },
    ]);
    assert.deepEqual(out, { caller_name: null, callback_phone: null, new_patient: null });
  });
});
