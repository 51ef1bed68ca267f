// The LLM port, consumed by the dialogue engine (src/engine/) and implemented by the adapters in
// src/providers/llm/ (neither imports the other): the part that decides what the agent says and
// which tools it uses. The engine owns the tools (knowledge search, functions, transfer, end) and
// records every use as an action; an adapter only decides when to call them. The agent, its turns,
// functions and extraction fields below are the vocabulary both sides speak.

export const FUNCTION_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const EXTRACTION_FIELD_TYPES = ['string', 'number', 'boolean', 'enum'] as const;
/** Tools the engine itself offers the model; an agent function may not take one of these names. */
export const ENGINE_TOOL_NAMES = ['transfer_call', 'end_call', 'search_knowledge_base'] as const;

export interface EngineFunction {
  name: string;
  description: string;
  url: string;
  method: (typeof FUNCTION_METHODS)[number];
  /** JSON Schema of the arguments object. */
  parameters: object;
  timeout_ms: number;
}

export interface ExtractionField {
  name: string;
  type: (typeof EXTRACTION_FIELD_TYPES)[number];
  description: string;
  enum?: string[];
}

export interface EngineAgent {
  id: string;
  name: string;
  prompt: string;
  first_message: string | null;
  language: string;
  transfer_number: string | null;
  functions: EngineFunction[];
  extraction_fields: ExtractionField[];
  end_call_phrases: string[];
  knowledge_base_ids: string[];
  llm: { provider: string; model: string; temperature: number };
}

export interface Turn {
  role: 'agent' | 'user';
  text: string;
}

export type FunctionCallResult = { status: number; body: unknown; duration_ms: number };

export interface KnowledgePassage {
  source_id: string;
  chunk_id: string;
  text: string;
  score: number;
}

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

/** An LLM provider failed or answered something unusable (502 upstream_error). */
export class LlmError extends Error {
  override name = 'LlmError';
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
