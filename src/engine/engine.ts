// The dialogue engine every call, widget chat and voice session runs: one user turn in, the
// agent's reply and the actions it took out. It owns the tools (knowledge search, functions,
// transfer, end) and records each use; the LLM port decides when to use them.
import { hasPhrase } from '../platform/text.ts';
import { agentInstructions, agentToolSpecs, runTool } from '../ports/agent-tools.ts';
import { type EngineAgent, type LLM, substituteVariables, type Turn } from '../ports/llm.ts';
import { createToolbox } from './tools.ts';
import type { AgentToolbox, DialogueEngine, FunctionInvoker, KnowledgeSearch, RespondInput, RespondResult } from './types.ts';

export { KB_TOP_K } from './tools.ts';

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

export function createDialogueEngine(deps: DialogueEngineDeps): DialogueEngine {
  function greet(agent: EngineAgent, variables: Record<string, string>): Turn {
    const text = agent.first_message?.trim()
      ? substituteVariables(agent.first_message, variables)
      : `Hello, this is ${agent.name}. How can I help you today?`;
    return { role: 'agent', text };
  }

  async function respond(input: RespondInput): Promise<RespondResult> {
    const agent = withVariables(input.agent, input.variables);
    const { tools, actions, ended } = createToolbox(deps, input.workspaceId, agent);

    const { reply } = await deps.llm.respond(
      { agent, history: input.history, userText: input.userText, variables: input.variables, onDelta: input.onReplyDelta, signal: input.signal },
      tools,
    );
    // end_call_phrases are a hard rule whatever the model decided: said by the caller, or by the agent.
    if (!ended()) {
      const phrases = agent.end_call_phrases.filter((p) => p.trim() !== '');
      if (phrases.some((p) => hasPhrase(input.userText, p))) tools.endCall('caller_goodbye');
      else if (phrases.some((p) => hasPhrase(reply, p))) tools.endCall('agent_end_call');
    }
    return { reply, actions, ended: ended() };
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

  /**
   * The agent's tools for a model that calls them itself (a speech-to-speech session): their specs,
   * the instructions, and running one by name; every use is recorded in `actions`.
   */
  function toolsFor(input: { workspaceId: string; agent: EngineAgent; variables: Record<string, string>; now: Date }): AgentToolbox {
    const agent = withVariables(input.agent, input.variables);
    const { tools, actions, ended } = createToolbox(deps, input.workspaceId, agent);
    return {
      specs: agentToolSpecs(agent),
      instructions: agentInstructions(agent, input.variables, input.now),
      actions,
      ended,
      async run(name, rawArgs) {
        const { content, terminal } = await runTool(name, rawArgs, tools);
        return { output: JSON.stringify(content), terminal };
      },
    };
  }

  return { greet, respond, extract, toolsFor };
}
