// The dialogue engine every call, widget chat and voice session runs: one user turn in, the
// agent's reply and the actions it took out. It owns the tools (knowledge search, functions,
// transfer, end) and records each use; the LLM port decides when to use them.
import { hasPhrase } from '../platform/text.ts';
import { type EngineAgent, type KnowledgePassage, type LLM, type LlmTools, substituteVariables, type Turn } from '../ports/llm.ts';
import type { DialogueEngine, EngineAction, FunctionInvoker, KnowledgeSearch, RespondInput, RespondResult } from './types.ts';

/** Passages fetched per knowledge search. */
export const KB_TOP_K = 3;

export interface DialogueEngineDeps {
  llm: LLM;
  knowledge: KnowledgeSearch;
  functions: FunctionInvoker;
}

export function withVariables(agent: EngineAgent, variables: Record<string, string>): EngineAgent {
  return {
    ...agent,
    prompt: substituteVariables(agent.prompt, variables),
    first_message: agent.first_message === null ? null : substituteVariables(agent.first_message, variables),
  };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function createDialogueEngine(deps: DialogueEngineDeps): DialogueEngine {
  function greet(agent: EngineAgent, variables: Record<string, string>): Turn {
    const text = agent.first_message?.trim()
      ? substituteVariables(agent.first_message, variables)
      : `Hello, this is ${agent.name}. How can I help you today?`;
    return { role: 'agent', text };
  }

  async function respond(input: RespondInput): Promise<RespondResult> {
    const agent = withVariables(input.agent, input.variables);
    const actions: EngineAction[] = [];
    let ended = false;

    const tools: LlmTools = {
      async searchKnowledgeBase(query) {
        if (agent.knowledge_base_ids.length === 0) return [];
        let results: KnowledgePassage[] = [];
        try {
          results = await deps.knowledge.search(input.workspaceId, agent.knowledge_base_ids, query, KB_TOP_K);
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

    const { reply } = await deps.llm.respond(
      { agent, history: input.history, userText: input.userText, variables: input.variables, onDelta: input.onReplyDelta, signal: input.signal },
      tools,
    );
    // end_call_phrases are a hard rule whatever the model decided: said by the caller, or by the agent.
    if (!ended) {
      const phrases = agent.end_call_phrases.filter((p) => p.trim() !== '');
      if (phrases.some((p) => hasPhrase(input.userText, p))) tools.endCall('caller_goodbye');
      else if (phrases.some((p) => hasPhrase(reply, p))) tools.endCall('agent_end_call');
    }
    return { reply, actions, ended };
  }

  async function extract(agent: EngineAgent, transcript: Turn[]): Promise<Record<string, unknown>> {
    const fields = agent.extraction_fields;
    if (fields.length === 0) return {};
    const raw = await deps.llm.extract({ agent, fields, transcript });
    const out: Record<string, unknown> = {};
    for (const field of fields) {
      const value = raw[field.name];
      out[field.name] = value === undefined ? null : value;
    }
    return out;
  }

  return { greet, respond, extract };
}
