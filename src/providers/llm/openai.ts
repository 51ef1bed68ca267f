// OpenAI-compatible LLM adapter (OpenAI, Azure-style gateways, vLLM, Ollama, LM Studio ...):
// streamed Chat Completions with the engine's tools, a bounded tool-call loop, and structured
// output (json_schema) for post-call extraction.
import type OpenAI from 'openai';
import { openAiSdk } from '../openai-sdk.ts';
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionToolChoiceOption,
} from 'openai/resources/chat/completions';
import type { Clock } from '../../platform/clock.ts';
import { systemClock } from '../../platform/clock.ts';
import {
  type EngineAgent,
  ENGINE_TOOL_NAMES,
  type ExtractionField,
  type LLM,
  LlmError,
  type LlmExtractInput,
  type LlmRespondInput,
  type LlmTools,
  type Turn,
} from '../../ports/llm.ts';

/** Model requests per user turn, tool rounds included; the last one may not call tools. */
export const MAX_TOOL_ROUNDS = 5;

export interface OpenAiLlmOptions {
  baseUrl: string;
  apiKey?: string;
  /** The server's default model (LLM_MODEL); an agent whose llm.provider is not "builtin" may name its own. */
  model: string;
  clock?: Clock;
  timeoutMs?: number;
  maxRetries?: number;
}

const BUILTIN_TOOLS = ENGINE_TOOL_NAMES;

export function modelFor(agent: EngineAgent, fallback: string): string {
  const { provider, model } = agent.llm;
  return provider !== 'builtin' && model.trim() !== '' ? model : fallback;
}

export function toolsFor(agent: EngineAgent): ChatCompletionFunctionTool[] {
  const tools: ChatCompletionFunctionTool[] = [];
  if (agent.transfer_number) {
    tools.push({
      type: 'function',
      function: {
        name: 'transfer_call',
        description: 'Transfer the caller to a human colleague. Use when the caller asks for a person or you cannot help.',
        parameters: {
          type: 'object',
          properties: { reason: { type: 'string', description: 'Why the call is transferred, in a few words.' } },
          required: ['reason'],
          additionalProperties: false,
        },
      },
    });
  }
  tools.push({
    type: 'function',
    function: {
      name: 'end_call',
      description: 'End the call once the conversation is over, after saying goodbye.',
      parameters: {
        type: 'object',
        properties: {
          reason: {
            type: 'string',
            enum: ['caller_goodbye', 'agent_end_call'],
            description: 'caller_goodbye when the caller said goodbye or asked to end; agent_end_call when you decided to end.',
          },
        },
        required: ['reason'],
        additionalProperties: false,
      },
    },
  });
  if (agent.knowledge_base_ids.length > 0) {
    tools.push({
      type: 'function',
      function: {
        name: 'search_knowledge_base',
        description: "Search the business's knowledge base. Use it before answering any factual question about the business.",
        parameters: {
          type: 'object',
          properties: { query: { type: 'string', description: 'What to look up, as a short question or keywords.' } },
          required: ['query'],
          additionalProperties: false,
        },
      },
    });
  }
  for (const fn of agent.functions) {
    if ((BUILTIN_TOOLS as readonly string[]).includes(fn.name)) continue;
    tools.push({
      type: 'function',
      function: { name: fn.name, description: fn.description, parameters: fn.parameters as Record<string, unknown> },
    });
  }
  return tools;
}

export function systemPrompt(agent: EngineAgent, variables: Record<string, string>, now: Date): string {
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

function historyMessages(history: Turn[]): ChatCompletionMessageParam[] {
  return history.map((t) => (t.role === 'agent' ? { role: 'assistant', content: t.text } : { role: 'user', content: t.text }));
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

/** JSON Schema of the extraction answer: every field present, null when not found. */
export function extractionSchema(fields: ExtractionField[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const f of fields) {
    if (f.type === 'enum') properties[f.name] = { type: ['string', 'null'], enum: [...(f.enum ?? []), null], description: f.description };
    else properties[f.name] = { type: [f.type, 'null'], description: f.description };
  }
  return { type: 'object', properties, required: fields.map((f) => f.name), additionalProperties: false };
}

function coerce(field: ExtractionField, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (field.type) {
    case 'number': {
      const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.replace(/,/g, '')) : Number.NaN;
      return Number.isFinite(n) ? n : null;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'yes') return true;
      if (value === 'false' || value === 'no') return false;
      return null;
    case 'enum':
      return typeof value === 'string' && (field.enum ?? []).includes(value) ? value : null;
    default:
      return typeof value === 'string' ? (value.trim() === '' ? null : value) : typeof value === 'number' ? String(value) : null;
  }
}

export function createOpenAiLlm(opts: OpenAiLlmOptions): LLM {
  const clock = opts.clock ?? systemClock;
  // Local OpenAI-compatible servers often need no key; the SDK insists on one.
  const client = new (openAiSdk().OpenAI)({
    baseURL: opts.baseUrl,
    apiKey: opts.apiKey ?? 'not-set',
    timeout: opts.timeoutMs ?? 30_000,
    maxRetries: opts.maxRetries ?? 1,
  });

  async function streamRound(
    agent: EngineAgent,
    messages: ChatCompletionMessageParam[],
    tools: ChatCompletionFunctionTool[],
    toolChoice: ChatCompletionToolChoiceOption,
    onDelta: ((text: string) => void) | undefined,
    signal: AbortSignal | undefined,
  ) {
    const stream = await client.chat.completions.create(
      {
      model: modelFor(agent, opts.model),
      messages,
      temperature: agent.llm.temperature,
      stream: true,
      ...(tools.length > 0 ? { tools, tool_choice: toolChoice } : {}),
      },
      { signal },
    );
    let content = '';
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) {
        content += delta.content;
        onDelta?.(delta.content);
      }
      for (const tc of delta.tool_calls ?? []) {
        calls[tc.index] ??= { id: '', name: '', arguments: '' };
        const acc = calls[tc.index];
        if (tc.id) acc.id = tc.id;
        if (tc.function?.name && acc.name === '') acc.name = tc.function.name;
        if (tc.function?.arguments) acc.arguments += tc.function.arguments;
      }
    }
    return { content, calls: calls.filter((c) => c !== undefined && c.name !== '') };
  }

  async function runTool(name: string, rawArgs: string, tools: LlmTools): Promise<{ content: unknown; terminal: boolean }> {
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

  async function respond(input: LlmRespondInput, tools: LlmTools) {
    const { agent } = input;
    const toolDefs = toolsFor(agent);
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: systemPrompt(agent, input.variables, clock.now()) },
      ...historyMessages(input.history),
      { role: 'user', content: input.userText },
    ];
    let terminal = false;
    // Everything said this turn, tool rounds included ("Let me check that." before a function call):
    // a voice session has already spoken it through onDelta, so the transcript keeps it too.
    const spoken: string[] = [];
    const said = () => spoken.map((s) => s.trim()).filter(Boolean).join(' ');
    for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
      const last = terminal || round === MAX_TOOL_ROUNDS - 1;
      let answer: Awaited<ReturnType<typeof streamRound>>;
      try {
        answer = await streamRound(agent, messages, toolDefs, last ? 'none' : 'auto', input.onDelta, input.signal);
      } catch (error) {
        throw new LlmError(`LLM request failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      const { content, calls } = answer;
      spoken.push(content);
      if (calls.length === 0 || last) return { reply: said() };
      const toolCalls: ChatCompletionMessageFunctionToolCall[] = calls.map((c, i) => ({
        id: c.id || `call_${round}_${i}`,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      }));
      messages.push({ role: 'assistant', content: content === '' ? null : content, tool_calls: toolCalls });
      for (const call of toolCalls) {
        const result = await runTool(call.function.name, call.function.arguments, tools);
        terminal ||= result.terminal;
        messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result.content) });
      }
      // A goodbye or transfer said together with the tool call needs no further round.
      if (terminal && content.trim() !== '') return { reply: said() };
    }
    return { reply: said() };
  }

  async function extract({ agent, fields, transcript }: LlmExtractInput): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = Object.fromEntries(fields.map((f) => [f.name, null]));
    if (fields.length === 0) return out;
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await client.chat.completions.create({
        model: modelFor(agent, opts.model),
        temperature: 0,
        messages: [
          {
            role: 'system',
            content:
              'Extract the requested fields from what the caller (user) said in this conversation. Use null when the caller did not give a value. ' +
              `Dates as YYYY-MM-DD (today is ${clock.now().toISOString().slice(0, 10)}), phone numbers in E.164, numbers as numbers.`,
          },
          { role: 'user', content: transcript.map((t) => `${t.role}: ${t.text}`).join('\n') },
        ],
        response_format: { type: 'json_schema', json_schema: { name: 'extraction', strict: true, schema: extractionSchema(fields) } },
      });
    } catch (error) {
      throw new LlmError(`LLM extraction failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    const content = completion.choices[0]?.message?.content;
    if (!content) return out;
    let parsed: unknown;
    try {
      parsed = JSON.parse(content);
    } catch {
      return out;
    }
    if (!parsed || typeof parsed !== 'object') return out;
    for (const f of fields) out[f.name] = coerce(f, (parsed as Record<string, unknown>)[f.name]);
    return out;
  }

  return { kind: 'openai', respond, extract };
}
