// The dialogue engine's contract: what callers (agents chat, calls, widgets, voice sessions)
// hand it and what it hands back. It knows nothing of telephony or HTTP; knowledge search and
// function invocation are ports implemented elsewhere. The agent, turns, functions and extraction
// fields are the LLM port's vocabulary (src/ports/llm.ts), shared with the adapters.
import type { EngineAgent, EngineFunction, FunctionCallResult, KnowledgePassage, Turn } from '../ports/llm.ts';

export type EngineAction =
  | { type: 'transfer_call'; to: string; reason: string }
  | { type: 'end_call'; reason: 'caller_goodbye' | 'agent_end_call' }
  | { type: 'function_call'; name: string; arguments: Record<string, unknown>; result: FunctionCallResult | { error: string } }
  | { type: 'search_knowledge_base'; query: string; results: number };

export interface KnowledgeSearch {
  search(workspaceId: string, knowledgeBaseIds: string[], query: string, topK: number): Promise<KnowledgePassage[]>;
}

export interface FunctionInvoker {
  invoke(fn: EngineFunction, args: Record<string, unknown>): Promise<FunctionCallResult>;
}

export interface RespondInput {
  workspaceId: string;
  agent: EngineAgent;
  /** Earlier turns, oldest first, without the current user text. */
  history: Turn[];
  userText: string;
  variables: Record<string, string>;
  /** Optional: receives the reply as it is produced, so speech can start before the turn completes. */
  onReplyDelta?: (text: string) => void;
  /** Aborted when the reply is no longer wanted (the caller barged in): the model call stops. */
  signal?: AbortSignal;
}

export interface RespondResult {
  reply: string;
  actions: EngineAction[];
  /** True when the conversation is over for the agent: it ended the call or transferred it. */
  ended: boolean;
}

/** The agent's tools for one live session of a model that calls them itself. */
export interface AgentToolbox {
  /** Name, description and JSON Schema of each tool the agent offers. */
  specs: Array<{ name: string; description: string; parameters: Record<string, unknown> }>;
  /** The system prompt, telling the model when to use each tool. */
  instructions: string;
  /** Every tool use so far, in order. */
  actions: EngineAction[];
  /** True once the agent ended the call or transferred it. */
  ended(): boolean;
  /** Runs a tool by name with the model's raw JSON arguments: the output to hand back, and whether the call ends with it. */
  run(name: string, rawArgs: string): Promise<{ output: string; terminal: boolean }>;
}

export interface DialogueEngine {
  /** The agent's opening turn: first_message with {{var}} substituted, or a default greeting naming the agent when it has none. */
  greet(agent: EngineAgent, variables: Record<string, string>): Turn;
  respond(input: RespondInput): Promise<RespondResult>;
  /** Values by extraction field name from the user turns; a field not found is null. */
  extract(agent: EngineAgent, transcript: Turn[]): Promise<Record<string, unknown>>;
  toolsFor(input: { workspaceId: string; agent: EngineAgent; variables: Record<string, string>; now: Date }): AgentToolbox;
}
