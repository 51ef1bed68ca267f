// The LLM port, owned by its consumer, the dialogue engine (adapters in src/providers/llm/ import
// it; the engine imports no adapter): the part that decides what the agent says and which
// tools it uses. The engine owns the tools (knowledge search, functions, transfer, end) and
// records every use as an action; an adapter only decides when to call them.
import type { EngineAgent, ExtractionField, FunctionCallResult, KnowledgePassage, Turn } from './types.ts';

export interface LlmTools {
  /** Searches the agent's knowledge bases (no-op returning [] when it has none). */
  searchKnowledgeBase(query: string): Promise<KnowledgePassage[]>;
  /** Calls one of the agent's functions; a failure comes back as `{error}`, never thrown. */
  callFunction(name: string, args: Record<string, unknown>): Promise<FunctionCallResult | { error: string }>;
  /** Transfers to the agent's transfer_number; `ok: false` when the agent has none. */
  transferCall(reason: string): { ok: true; to: string } | { ok: false; error: string };
  endCall(reason: 'caller_goodbye' | 'agent_end_call'): void;
}

export interface LlmRespondInput {
  /** The agent with {{variables}} already substituted in prompt and first_message. */
  agent: EngineAgent;
  history: Turn[];
  userText: string;
  variables: Record<string, string>;
  /** Receives the reply's text as it is produced (streamed fragments; the built-in sends it whole). */
  onDelta?: (text: string) => void;
  /** Aborted when the reply is no longer wanted; an adapter stops its request. */
  signal?: AbortSignal;
}

export interface LlmExtractInput {
  agent: EngineAgent;
  fields: ExtractionField[];
  transcript: Turn[];
}

export interface LLM {
  readonly kind: 'builtin' | 'openai';
  respond(input: LlmRespondInput, tools: LlmTools): Promise<{ reply: string }>;
  /** Values by field name; a field not found is null. */
  extract(input: LlmExtractInput): Promise<Record<string, unknown>>;
}

export interface LlmConfig {
  baseUrl?: string;
  apiKey?: string;
  model: string;
}

/** Substitutes `{{name}}` (spaces allowed inside the braces); an unknown variable is left as written. */
export function substituteVariables(text: string, variables: Record<string, string>): string {
  return text.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (whole, name: string) =>
    Object.hasOwn(variables, name) ? variables[name] : whole,
  );
}
