// The tools of one conversation turn or one live session, owned by the engine: knowledge search,
// the agent's functions, transfer and end call, each use recorded as an action. Offered to a chat
// model through the LLM port and to a speech-to-speech model through DialogueEngine.toolsFor; their
// specs and instructions are in ports/agent-tools.ts.
import type { EngineAgent, KnowledgePassage, LlmTools } from '../ports/llm.ts';
import type { EngineAction, FunctionInvoker, KnowledgeSearch } from './types.ts';

/** Passages fetched per knowledge search. */
export const KB_TOP_K = 3;

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The tools of one conversation turn (or one live session): each use recorded as an action. */
export function createToolbox(deps: { knowledge: KnowledgeSearch; functions: FunctionInvoker }, workspaceId: string, agent: EngineAgent) {
  const actions: EngineAction[] = [];
  let ended = false;
  const tools: LlmTools = {
    async searchKnowledgeBase(query) {
      if (agent.knowledge_base_ids.length === 0) return [];
      let results: KnowledgePassage[] = [];
      try {
        results = await deps.knowledge.search(workspaceId, agent.knowledge_base_ids, query, KB_TOP_K);
      } catch {
        // A failing search must not end a live conversation: the agent answers without passages.
      }
      actions.push({ type: 'search_knowledge_base', query, results: results.length });
      return results;
    },
    async callFunction(name, args) {
      const fn = agent.functions.find((f) => f.name === name);
      let result: Extract<EngineAction, { type: 'function_call' }>['result'];
      if (!fn) result = { error: `the agent has no function named ${name}` };
      else {
        try {
          result = await deps.functions.invoke(fn, args);
        } catch (error) {
          result = { error: errorMessage(error) };
        }
      }
      actions.push({ type: 'function_call', name, arguments: args, result });
      return result;
    },
    transferCall(reason) {
      if (!agent.transfer_number) return { ok: false, error: 'this agent has no transfer number' };
      if (ended) return { ok: false, error: 'the call is already ending' };
      actions.push({ type: 'transfer_call', to: agent.transfer_number, reason });
      ended = true;
      return { ok: true, to: agent.transfer_number };
    },
    endCall(reason) {
      if (ended) return;
      actions.push({ type: 'end_call', reason });
      ended = true;
    },
  };
  return { tools, actions, ended: () => ended };
}
