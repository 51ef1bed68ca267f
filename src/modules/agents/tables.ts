import type { Generated } from 'kysely';
import type { Json, Timestamp } from '../../platform/db/foundation-tables.ts';
import type { EngineFunction, ExtractionField, Turn } from '../../ports/llm.ts';

// Tables of agents (migration 0003): agents and their chat-test conversations.

export interface AgentLlmColumn {
  provider: 'builtin' | 'openai' | 'openai-realtime';
  model: string;
  temperature: number;
}

export interface AgentVoicemailColumn {
  action: 'hangup' | 'leave_message';
  message: string | null;
}

export interface AgentsTable {
  id: string;
  workspace_id: string;
  name: string;
  prompt: string;
  first_message: string | null;
  language: string;
  voice: string;
  llm: Json<AgentLlmColumn>;
  knowledge_base_ids: Json<string[]>;
  transfer_number: string | null;
  functions: Json<EngineFunction[]>;
  extraction_fields: Json<ExtractionField[]>;
  end_call_phrases: Json<string[]>;
  max_duration_seconds: number;
  /** Turn taking (migration 0006): silence that ends the caller's turn, speech that barges in. */
  turn_end_silence_ms: Generated<number>;
  barge_in_min_ms: Generated<number>;
  interruptible: Generated<boolean>;
  silence_timeout_seconds: Generated<number>;
  voicemail: Json<AgentVoicemailColumn>;
  webhook_url: string | null;
  webhook_events: Json<string[]>;
  metadata: Json<Record<string, unknown>>;
  /**
   * The whsec_ secret in clear: it signs every delivery and function call, so it must be
   * readable (unlike passwords and API keys, which are only verified). Never returned by reads.
   */
  webhook_secret: string;
  /** The secret before the last rotation, still sent in webhook-signature for 24 h after it. */
  previous_webhook_secret: string | null;
  webhook_secret_rotated_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Deleted agents keep their row so calls and analytics still name them; reads skip them. */
  deleted_at: Timestamp | null;
}

export interface StoredTurn extends Turn {
  at: string;
}

export interface AgentConversationsTable {
  id: string;
  workspace_id: string;
  agent_id: string;
  /** Where the conversation came from: `api` (POST /agents/{id}/chat) or `widget`. */
  channel: string;
  variables: Json<Record<string, string>>;
  turns: Json<StoredTurn[]>;
  /** The agent ended or transferred the conversation. */
  ended: boolean;
  /** Widget conversations (migration 0012): the widget and the visitor it came from. */
  widget_id: string | null;
  visitor_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AgentTables {
  agents: AgentsTable;
  agent_conversations: AgentConversationsTable;
}
