import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manualClock } from '../platform/clock.ts';
import { createBuiltinLlm } from '../providers/llm/builtin.ts';
import { createDialogueEngine } from './engine.ts';
import { receptionist } from './fixtures/agents.ts';
import { inMemoryKnowledge, recordingInvoker } from './fixtures/doubles.ts';
import { FIXTURE_NOW } from './fixtures/extraction-cases.ts';

// The engine's tools for a model that calls them itself (a speech-to-speech session): the same
// specs, instructions and effects as a chat model gets through the LLM port, every use recorded.

function toolbox(agent = receptionist.agent, variables: Record<string, string> = {}) {
  const knowledge = inMemoryKnowledge(receptionist.passages);
  const invoker = recordingInvoker({ ...receptionist.behaviours, broken: () => new Error('upstream down') });
  const engine = createDialogueEngine({ llm: createBuiltinLlm({ clock: manualClock(FIXTURE_NOW) }), knowledge, functions: invoker });
  return { tools: engine.toolsFor({ workspaceId: 'ws_1', agent, variables, now: FIXTURE_NOW }), knowledge, invoker };
}

describe('engine.toolsFor', () => {
  it('offers transfer with a transfer number, end call always, knowledge search with knowledge bases, then the agent functions', () => {
    assert.deepEqual(toolbox().tools.specs.map((s) => s.name), ['transfer_call', 'end_call', 'search_knowledge_base', 'take_message']);
    const bare = toolbox({ ...receptionist.agent, transfer_number: null, knowledge_base_ids: [], functions: [] });
    assert.deepEqual(bare.tools.specs.map((s) => s.name), ['end_call']);
    const endCall = bare.tools.specs[0];
    assert.deepEqual(endCall.parameters, {
      type: 'object',
      properties: { reason: { type: 'string', enum: ['caller_goodbye', 'agent_end_call'], description: endCall.parameters.properties && (endCall.parameters.properties as { reason: { description: string } }).reason.description } },
      required: ['reason'],
      additionalProperties: false,
    });
    // A function named like an engine tool is not offered twice.
    const clash = toolbox({ ...receptionist.agent, functions: [{ ...receptionist.agent.functions[0], name: 'end_call' }] });
    assert.equal(clash.tools.specs.filter((s) => s.name === 'end_call').length, 1);
  });

  it('instructions: the prompt with variables, the language, the date, when to use each tool, the end-call phrases', () => {
    const agent = { ...receptionist.agent, prompt: 'You help {{name}}.', end_call_phrases: ['bye now', ' '] };
    const { instructions } = toolbox(agent, { name: 'Lee' }).tools;
    assert.ok(instructions.startsWith('You help Lee.'), instructions);
    for (const line of [`Answer in the language ${agent.language}`, `Today is ${FIXTURE_NOW.toISOString().slice(0, 10)}.`, 'Use search_knowledge_base', 'Use transfer_call', 'Use end_call', 'The call also ends when the caller says: "bye now".', 'Known about this call: name = Lee.']) {
      assert.ok(instructions.includes(line), `missing: ${line}`);
    }
  });

  it('runs knowledge search, a function, a failing function and an unknown one, recording each', async () => {
    const broken = { ...receptionist.agent.functions[0], name: 'broken' };
    const { tools, invoker, knowledge } = toolbox({ ...receptionist.agent, functions: [...receptionist.agent.functions, broken] });
    const search = JSON.parse((await tools.run('search_knowledge_base', '{"query":"opening hours Saturday"}')).output);
    assert.match(search.results[0].text, /Saturday from 9 am to 1 pm/);
    assert.deepEqual(knowledge.searches.map((s) => [s.workspaceId, s.knowledgeBaseIds, s.topK]), [['ws_1', ['kb_dental'], 3]]);
    const saved = await tools.run('take_message', JSON.stringify({ caller_name: 'Lee', phone_number: '+15550100999', message: 'call me' }));
    assert.deepEqual([JSON.parse(saved.output).status, saved.terminal], [200, false]);
    assert.deepEqual(JSON.parse((await tools.run('broken', '{}')).output), { error: 'upstream down' });
    assert.deepEqual(invoker.calls.map((c) => c.name), ['take_message', 'broken']);
    assert.deepEqual(JSON.parse((await tools.run('nope', '{}')).output), { error: 'the agent has no function named nope' });
    assert.deepEqual(JSON.parse((await tools.run('take_message', '[1,2]')).output), { error: 'arguments were not a JSON object' });
    assert.deepEqual(tools.actions.map((a) => a.type), ['search_knowledge_base', 'function_call', 'function_call', 'function_call']);
    assert.equal(tools.ended(), false);
  });

  it('transfer and end call are terminal, and only the first ends the call', async () => {
    const { tools } = toolbox();
    const transfer = await tools.run('transfer_call', '{"reason":"wants a person"}');
    assert.deepEqual([JSON.parse(transfer.output).transferred_to, transfer.terminal], ['+15550100200', true]);
    assert.equal(tools.ended(), true);
    const again = await tools.run('transfer_call', '{"reason":"again"}');
    assert.deepEqual([JSON.parse(again.output), again.terminal], [{ error: 'the call is already ending' }, false]);
    await tools.run('end_call', '{"reason":"caller_goodbye"}');
    assert.deepEqual(tools.actions, [{ type: 'transfer_call', to: '+15550100200', reason: 'wants a person' }]);
    const fresh = toolbox().tools;
    const end = await fresh.run('end_call', '{"reason":"caller_goodbye"}');
    assert.equal(end.terminal, true);
    assert.deepEqual(fresh.actions, [{ type: 'end_call', reason: 'caller_goodbye' }]);
  });
});
