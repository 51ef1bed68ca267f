import { type Selectable, sql } from 'kysely';
import type { EngineFunction, ExtractionField } from '../../ports/llm.ts';
import type { Executor } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { AgentConversationsTable, AgentLlmColumn, AgentsTable, AgentVoicemailColumn, StoredTurn } from './tables.ts';

// Queries of agents and their chat conversations. Every read takes the workspace; deleted agents
// (deleted_at set) are invisible to every read.

/** The columns a write sets (jsonb columns as values; the repo serialises them). */
export interface AgentValues {
  name: string;
  prompt: string;
  first_message: string | null;
  language: string;
  voice: string;
  llm: AgentLlmColumn;
  knowledge_base_ids: string[];
  transfer_number: string | null;
  functions: EngineFunction[];
  extraction_fields: ExtractionField[];
  end_call_phrases: string[];
  max_duration_seconds: number;
  turn_end_silence_ms: number;
  barge_in_min_ms: number;
  interruptible: boolean;
  silence_timeout_seconds: number;
  voicemail: AgentVoicemailColumn;
  webhook_url: string | null;
  webhook_events: string[];
  metadata: Record<string, unknown>;
}

const JSON_COLUMNS = ['llm', 'knowledge_base_ids', 'functions', 'extraction_fields', 'end_call_phrases', 'voicemail', 'webhook_events', 'metadata'] as const;

/** jsonb columns go to the driver as JSON text (node-postgres would send a JS array as a SQL array). */
function serialise(values: Partial<AgentValues>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...values };
  for (const column of JSON_COLUMNS) if (column in out) out[column] = JSON.stringify(out[column]);
  return out;
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export function createAgentsRepo() {
  return {
    find(db: Executor, workspaceId: string, id: string) {
      return db
        .selectFrom('agents')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
    },

    list(db: Executor, workspaceId: string, page: PageRequest, filters: { name?: string; language?: string }) {
      let query = db.selectFrom('agents').selectAll().where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null);
      if (page.after) query = query.where('id', '<', page.after);
      if (filters.name) query = query.where(sql<boolean>`name ilike ${`%${escapeLike(filters.name)}%`} escape '\\'`);
      if (filters.language) query = query.where('language', '=', filters.language);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },

    insert(db: Executor, row: { id: string; workspaceId: string; values: AgentValues; webhookSecret: string; now: Date }) {
      return db
        .insertInto('agents')
        .values({
          id: row.id,
          workspace_id: row.workspaceId,
          ...(serialise(row.values) as unknown as AgentValues),
          webhook_secret: row.webhookSecret,
          created_at: row.now,
          updated_at: row.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    update(db: Executor, workspaceId: string, id: string, values: Partial<AgentValues>, now: Date) {
      return db
        .updateTable('agents')
        .set({ ...(serialise(values) as Partial<AgentValues>), updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
    },

    rotateSecret(db: Executor, workspaceId: string, id: string, secret: string, now: Date) {
      return db
        .updateTable('agents')
        .set((eb) => ({
          previous_webhook_secret: eb.ref('webhook_secret'),
          webhook_secret: secret,
          webhook_secret_rotated_at: now,
          updated_at: now,
        }))
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
    },

    async softDelete(db: Executor, workspaceId: string, id: string, now: Date): Promise<boolean> {
      const result = await db
        .updateTable('agents')
        .set({ deleted_at: now, updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Of `ids`, those naming a knowledge base of the workspace. */
    /**
     * Drops a deleted knowledge base from the knowledge_base_ids of the workspace's agents, so an
     * agent never holds an id that its own PATCH would then refuse as unknown.
     */
    async detachKnowledgeBase(db: Executor, workspaceId: string, knowledgeBaseId: string, now: Date) {
      await db
        .updateTable('agents')
        .set({ knowledge_base_ids: sql`knowledge_base_ids - ${knowledgeBaseId}::text`, updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where(sql<boolean>`knowledge_base_ids @> ${JSON.stringify([knowledgeBaseId])}::jsonb`)
        .execute();
    },
    async existingKnowledgeBaseIds(db: Executor, workspaceId: string, ids: string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db.selectFrom('knowledge_bases').select('id').where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
      return new Set(rows.map((r) => r.id));
    },

    findConversation(db: Executor, workspaceId: string, agentId: string, id: string) {
      return db
        .selectFrom('agent_conversations')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('agent_id', '=', agentId)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    insertConversation(db: Executor, row: { id: string; workspaceId: string; agentId: string; channel: string; widgetId?: string | null; visitorId?: string | null; variables: Record<string, string>; turns: StoredTurn[]; ended: boolean; now: Date }) {
      return db
        .insertInto('agent_conversations')
        .values({
          id: row.id,
          workspace_id: row.workspaceId,
          agent_id: row.agentId,
          channel: row.channel,
          widget_id: row.widgetId ?? null,
          visitor_id: row.visitorId ?? null,
          variables: JSON.stringify(row.variables),
          turns: JSON.stringify(row.turns),
          ended: row.ended,
          created_at: row.now,
          updated_at: row.now,
        })
        .execute();
    },

    /** Appends turns in one statement (two concurrent messages both keep their turns). */
    appendToConversation(db: Executor, workspaceId: string, id: string, change: { turns: StoredTurn[]; variables: Record<string, string>; ended: boolean; now: Date }) {
      return db
        .updateTable('agent_conversations')
        .set({
          turns: sql`turns || ${JSON.stringify(change.turns)}::jsonb`,
          variables: JSON.stringify(change.variables),
          ended: sql<boolean>`ended or ${change.ended}`,
          updated_at: change.now,
        })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .execute();
    },
  };
}

export type AgentsRepo = ReturnType<typeof createAgentsRepo>;
export type AgentRow = Selectable<AgentsTable>;
export type ConversationRow = Selectable<AgentConversationsTable>;
