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
import { agentInstructions, agentToolSpecs, runTool } from '../../ports/agent-tools.ts';
import { type EngineAgent, type ExtractionField, type LLM, LlmError, type LlmExtractInput, type LlmRespondInput, type LlmTools, type Turn } from '../../ports/llm.ts';

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


export function modelFor(agent: EngineAgent, fallback: string): string {
  const { provider, model } = agent.llm;
  return provider !== 'builtin' && model.trim() !== '' ? model : fallback;
}

/** The engine's tools in Chat Completions' format. */
export function toolsFor(agent: EngineAgent): ChatCompletionFunctionTool[] {
  return agentToolSpecs(agent).map((spec) => ({ type: 'function', function: spec }));
}

function historyMessages(history: Turn[]): ChatCompletionMessageParam[] {
  return history.map((t) => (t.role === 'agent' ? { role: 'assistant', content: t.text } : { role: 'user', content: t.text }));
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

  async function respond(input: LlmRespondInput, tools: LlmTools) {
    const { agent } = input;
    const toolDefs = toolsFor(agent);
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: agentInstructions(agent, input.variables, clock.now()) },
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
