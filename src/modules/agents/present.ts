import type { EngineAgent } from '../../ports/llm.ts';
import type { AgentDestination } from '../../platform/outbox/emit.ts';
import type { AgentRow } from './repo.ts';
import type { Agent } from './schemas.ts';

// An agent row as the API shows it, as the dialogue engine sees it, and as the events engine
// addresses its webhook.

/** How long the secret before a rotation still signs webhook-signature (DESIGN part 6). */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3_600_000;

export function presentAgent(row: AgentRow): Agent {
  return {
    id: row.id,
    name: row.name,
    prompt: row.prompt,
    first_message: row.first_message,
    language: row.language,
    voice: row.voice,
    llm: row.llm,
    knowledge_base_ids: row.knowledge_base_ids,
    transfer_number: row.transfer_number,
    functions: row.functions as Agent['functions'],
    extraction_fields: row.extraction_fields,
    end_call_phrases: row.end_call_phrases,
    max_duration_seconds: row.max_duration_seconds,
    turn_end_silence_ms: row.turn_end_silence_ms,
    barge_in_min_ms: row.barge_in_min_ms,
    interruptible: row.interruptible,
    silence_timeout_seconds: row.silence_timeout_seconds,
    voicemail: row.voicemail,
    webhook_url: row.webhook_url,
    webhook_events: row.webhook_events,
    metadata: row.metadata,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** The agent as the dialogue engine sees it. */
export function engineAgentOf(row: AgentRow): EngineAgent {
  return {
    id: row.id,
    name: row.name,
    prompt: row.prompt,
    first_message: row.first_message,
    language: row.language,
    transfer_number: row.transfer_number,
    functions: row.functions,
    extraction_fields: row.extraction_fields,
    end_call_phrases: row.end_call_phrases,
    knowledge_base_ids: row.knowledge_base_ids,
    llm: row.llm,
  };
}

/** The agent's webhook destination for platform.events.emit (null when it has no webhook_url). */
export function agentDestination(row: AgentRow): AgentDestination | null {
  if (!row.webhook_url) return null;
  const rotatedAt = row.webhook_secret_rotated_at ? new Date(row.webhook_secret_rotated_at) : null;
  return {
    agentId: row.id,
    url: row.webhook_url,
    secret: row.webhook_secret,
    events: row.webhook_events,
    previousSecret: row.previous_webhook_secret,
    previousSecretExpiresAt: rotatedAt ? new Date(rotatedAt.getTime() + PREVIOUS_SECRET_TTL_MS) : null,
  };
}
