// The agent's tools, owned by the engine and offered to any kind of model: a chat model through the
// LLM port (its adapter turns the specs into its vendor's tool format), or a speech-to-speech model
// that calls them itself during a live call (DialogueEngine.toolsFor). The specs, the instructions
// that tell the model when to use them, and running a call by name all live here, so both kinds of
// response search the same knowledge, call the same functions and end or transfer the same way.
import type { LlmTools } from './llm-port.ts';
import { ENGINE_TOOL_NAMES, type EngineAction, type EngineAgent, type FunctionInvoker, type KnowledgePassage, type KnowledgeSearch } from './types.ts';

/** Passages fetched per knowledge search. */
export const KB_TOP_K = 3;

/** A tool as a model is told of it: its name, what it does, the JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

const objectOf = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });

/** The tools this agent offers: transfer (with a transfer number), end call, knowledge search (with knowledge bases), its functions. */
export function agentToolSpecs(agent: EngineAgent): ToolSpec[] {
  const specs: ToolSpec[] = [];
  if (agent.transfer_number) {
    specs.push({
      name: 'transfer_call',
      description: 'Transfer the caller to a human colleague. Use when the caller asks for a person or you cannot help.',
      parameters: objectOf({ reason: { type: 'string', description: 'Why the call is transferred, in a few words.' } }),
    });
  }
  specs.push({
    name: 'end_call',
    description: 'End the call once the conversation is over, after saying goodbye.',
    parameters: objectOf({
      reason: {
        type: 'string',
        enum: ['caller_goodbye', 'agent_end_call'],
        description: 'caller_goodbye when the caller said goodbye or asked to end; agent_end_call when you decided to end.',
      },
    }),
  });
  if (agent.knowledge_base_ids.length > 0) {
    specs.push({
      name: 'search_knowledge_base',
      description: "Search the business's knowledge base. Use it before answering any factual question about the business.",
      parameters: objectOf({ query: { type: 'string', description: 'What to look up, as a short question or keywords.' } }),
    });
  }
  for (const fn of agent.functions) {
    if ((ENGINE_TOOL_NAMES as readonly string[]).includes(fn.name)) continue;
    specs.push({ name: fn.name, description: fn.description, parameters: fn.parameters as Record<string, unknown> });
  }
  return specs;
}

/** The system prompt: the agent's own, how to speak, when to use each tool, what is known about the call. */
export function agentInstructions(agent: EngineAgent, variables: Record<string, string>, now: Date): string {
  const lines = [
    agent.prompt.trim(),
    '',
    `You are "${agent.name}", speaking with a caller in a live voice conversation. Answer in the language ${agent.language}, ` +
      'in short spoken sentences without markdown, lists or emoji.',
    `Today is ${now.toISOString().slice(0, 10)}.`,
  ];
  if (agent.knowledge_base_ids.length > 0) lines.push('Use search_knowledge_base for facts about the business and answer only from what it returns.');
  if (agent.transfer_number) lines.push('Use transfer_call when the caller asks for a human or you cannot help.');
  lines.push('Use end_call when the conversation is over: say goodbye in the same reply.');
  const phrases = agent.end_call_phrases.filter((p) => p.trim() !== '');
  if (phrases.length > 0) lines.push(`The call also ends when the caller says: ${phrases.map((p) => `"${p}"`).join(', ')}.`);
  const known = Object.entries(variables);
  if (known.length > 0) lines.push(`Known about this call: ${known.map(([k, v]) => `${k} = ${v}`).join('; ')}.`);
  return lines.join('\n');
}

function parseArguments(raw: string): Record<string, unknown> | null {
  if (raw.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(raw);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Runs the tool `name` with the model's raw JSON arguments: what to tell the model, and whether the call ends with it. */
export async function runTool(name: string, rawArgs: string, tools: LlmTools): Promise<{ content: unknown; terminal: boolean }> {
  const args = parseArguments(rawArgs);
  if (args === null) return { content: { error: 'arguments were not a JSON object' }, terminal: false };
  switch (name) {
    case 'search_knowledge_base': {
      const query = typeof args.query === 'string' ? args.query : '';
      const results = await tools.searchKnowledgeBase(query);
      return { content: { results: results.map((r) => ({ text: r.text, score: r.score })) }, terminal: false };
    }
    case 'transfer_call': {
      const result = tools.transferCall(typeof args.reason === 'string' && args.reason !== '' ? args.reason : 'requested by the agent');
      return { content: result.ok ? { transferred_to: result.to, note: 'Tell the caller they are being transferred.' } : { error: result.error }, terminal: result.ok };
    }
    case 'end_call':
      tools.endCall(args.reason === 'caller_goodbye' ? 'caller_goodbye' : 'agent_end_call');
      return { content: { ended: true, note: 'The call ends after your reply.' }, terminal: true };
    default:
      return { content: await tools.callFunction(name, args), terminal: false };
  }
}

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
