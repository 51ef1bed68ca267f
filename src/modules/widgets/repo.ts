import { type Selectable, sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { WidgetMode, WidgetsTable, WidgetThemeColumn } from './tables.ts';

// Queries of widgets and their conversations. Every owner read takes the workspace; the public
// endpoints find a widget by its id alone (the id is what a page embeds) and only while it and
// its agent are live.

export type WidgetRow = Selectable<WidgetsTable>;

export interface WidgetValues {
  agent_id: string;
  name: string;
  mode: WidgetMode;
  theme: WidgetThemeColumn;
  allowed_origins: string[];
}

function serialise(values: Partial<WidgetValues>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...values };
  for (const column of ['theme', 'allowed_origins'] as const) if (column in out) out[column] = JSON.stringify(out[column]);
  return out;
}

export function createWidgetsRepo() {
  return {
    find(db: Executor, workspaceId: string, id: string) {
      return db.selectFrom('widgets').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    },

    /** A live widget of a live agent, by id alone (the public endpoints). */
    findPublic(db: Executor, id: string) {
      return db
        .selectFrom('widgets')
        .innerJoin('agents', 'agents.id', 'widgets.agent_id')
        .selectAll('widgets')
        .select(['agents.name as agent_name', 'agents.first_message as agent_first_message'])
        .where('widgets.id', '=', id)
        .where('widgets.deleted_at', 'is', null)
        .where('agents.deleted_at', 'is', null)
        .executeTakeFirst();
    },

    list(db: Executor, workspaceId: string, page: PageRequest, filters: { agentId?: string }) {
      let query = db.selectFrom('widgets').selectAll().where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null);
      if (page.after) query = query.where('id', '<', page.after);
      if (filters.agentId) query = query.where('agent_id', '=', filters.agentId);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },

    insert(db: Executor, row: { id: string; workspaceId: string; values: WidgetValues; now: Date }) {
      return db
        .insertInto('widgets')
        .values({ id: row.id, workspace_id: row.workspaceId, ...(serialise(row.values) as unknown as WidgetValues), created_at: row.now, updated_at: row.now })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    update(db: Executor, workspaceId: string, id: string, values: Partial<WidgetValues>, now: Date) {
      return db
        .updateTable('widgets')
        .set({ ...(serialise(values) as Partial<WidgetValues>), updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
    },

    async softDelete(db: Executor, workspaceId: string, id: string, now: Date): Promise<boolean> {
      const result = await db
        .updateTable('widgets')
        .set({ deleted_at: now, updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    listConversations(db: Executor, workspaceId: string, widgetId: string, page: PageRequest, filters: { visitorId?: string }) {
      // The list reads counts and the last line, not every turn of every conversation.
      let query = db
        .selectFrom('agent_conversations')
        .select(['id', 'widget_id', 'agent_id', 'visitor_id', 'ended', 'created_at', 'updated_at'])
        .select([sql<number>`jsonb_array_length(turns)`.as('message_count'), sql<string | null>`left(turns->-1->>'text', 200)`.as('last_message')])
        .where('workspace_id', '=', workspaceId)
        .where('widget_id', '=', widgetId);
      if (page.after) query = query.where('id', '<', page.after);
      if (filters.visitorId) query = query.where('visitor_id', '=', filters.visitorId);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },

    findConversation(db: Executor, workspaceId: string, widgetId: string, id: string) {
      return db.selectFrom('agent_conversations').selectAll().where('workspace_id', '=', workspaceId).where('widget_id', '=', widgetId).where('id', '=', id).executeTakeFirst();
    },
  };
}

export type WidgetsRepo = ReturnType<typeof createWidgetsRepo>;
