// The agent's tools as any model is told of them (issue 31): a chat model through the LLM port (its
// adapter turns the specs into its vendor's tool format) or a speech-to-speech model that calls
// them itself during a live call. The specs, the instructions telling the model when to use them,
// and running one by name over the engine's LlmTools are shared vocabulary of the ports; the
// engine owns what the tools do (engine/tools.ts).
import { ENGINE_TOOL_NAMES, type EngineAgent, type LlmTools } from './llm.ts';

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

