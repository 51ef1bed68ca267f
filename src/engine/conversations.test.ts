// Runs the scripted conversation of each catalog template through the real built-in engine and
// checks every reply, every action, the function calls that reached the invoker, the knowledge
// searches, and the extraction at the end.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manualClock } from '../platform/clock.ts';
import { createBuiltinLlm } from '../providers/llm/builtin.ts';
import { createDialogueEngine } from './engine.ts';
import { TEMPLATE_AGENTS } from './fixtures/agents.ts';
import { CONVERSATIONS } from './fixtures/conversations.ts';
import { inMemoryKnowledge, recordingInvoker } from './fixtures/doubles.ts';
import { FIXTURE_NOW } from './fixtures/extraction-cases.ts';
import type { Turn } from '../ports/llm.ts';

describe('scripted conversations per agent template (built-in engine)', () => {
  it('covers the five templates', () => {
    assert.deepEqual(
      CONVERSATIONS.map((c) => c.template).sort(),
      ['appointment_booking', 'lead_qualification', 'outbound_survey', 'receptionist', 'support'],
    );
  });

  for (const conversation of CONVERSATIONS) {
    it(`${conversation.template}: greets, answers, acts and extracts as scripted`, async () => {
      const template = TEMPLATE_AGENTS.find((t) => t.template === conversation.template)!;
      const knowledge = inMemoryKnowledge(template.passages);
      const invoker = recordingInvoker(template.behaviours);
      const engine = createDialogueEngine({ llm: createBuiltinLlm({ clock: manualClock(FIXTURE_NOW) }), knowledge, functions: invoker });

      const greeting = engine.greet(template.agent, template.variables);
      assert.deepEqual(greeting, { role: 'agent', text: conversation.greeting });
      const transcript: Turn[] = [greeting];
      for (const [i, step] of conversation.steps.entries()) {
        const result = await engine.respond({
          workspaceId: 'ws_test',
          agent: template.agent,
          history: [...transcript],
          userText: step.user,
          variables: template.variables,
        });
        assert.deepEqual(result, { reply: step.agent, actions: step.actions, ended: step.ended }, `step ${i + 1}: "${step.user}"`);
        transcript.push({ role: 'user', text: step.user }, { role: 'agent', text: result.reply });
      }

      // The conversation ends exactly at its last step, by goodbye or transfer.
      assert.deepEqual(conversation.steps.map((s) => s.ended), conversation.steps.map((_, i) => i === conversation.steps.length - 1));
      const last = conversation.steps.at(-1)!.actions.at(-1)!;
      assert.ok(last.type === 'end_call' || last.type === 'transfer_call');

      // Every function call action reached the invoker with the same arguments and URL.
      const called = conversation.steps.flatMap((s) => s.actions).filter((a) => a.type === 'function_call');
      assert.ok(called.length >= 1);
      assert.deepEqual(
        invoker.calls,
        called.map((a) => ({ name: a.name, url: template.agent.functions.find((f) => f.name === a.name)!.url, args: a.arguments })),
      );
      // Knowledge searches went to this workspace and the agent's knowledge bases, and one answered.
      const searched = conversation.steps.flatMap((s) => s.actions).filter((a) => a.type === 'search_knowledge_base');
      assert.ok(searched.some((a) => a.results > 0));
      assert.deepEqual(
        knowledge.searches.map((s) => [s.workspaceId, s.knowledgeBaseIds, s.query]),
        searched.map((a) => ['ws_test', template.agent.knowledge_base_ids, a.query]),
      );

      assert.deepEqual(await engine.extract(template.agent, transcript), conversation.extracted);
    });
  }
});
