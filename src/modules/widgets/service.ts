import type { WorkspaceContext } from '../../platform/auth/access.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { AppError, type FieldError, invalidField, invalidState, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { type Page, pageRequest, toPage } from '../../platform/pagination.ts';
import type { StoredTurn } from '../agents/tables.ts';
import type { AgentsService } from '../agents/service.ts';
import { normaliseOrigin } from './origin.ts';
import type { WidgetRow, WidgetsRepo, WidgetValues } from './repo.ts';
import {
  type ConversationListQuery,
  DEFAULT_PRIMARY_COLOR,
  type Widget,
  type WidgetChatBody,
  type WidgetConfig,
  type WidgetConversationDetail,
  type WidgetCreate,
  type WidgetListQuery,
  type WidgetUpdate,
} from './schemas.ts';
import type { WidgetMode } from './tables.ts';

export interface WidgetsServiceDeps {
  db: Database;
  clock: Clock;
  repo: WidgetsRepo;
  agents: Pick<AgentsService, 'converse'>;
  /** Where the embed script is served from (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
}

/** A live widget as the public endpoints see it (with its agent's name). */
export type PublicWidget = NonNullable<Awaited<ReturnType<WidgetsRepo['findPublic']>>>;

const agentGreeting = (name: string) => `Hello, this is ${name}. How can I help you today?`;

export function createWidgetsService(deps: WidgetsServiceDeps) {
  const { db, clock, repo } = deps;
  const base = deps.publicBaseUrl.replace(/\/+$/, '');

  function present(row: WidgetRow): Widget {
    const embedUrl = `${base}/v1/widgets/${row.id}/embed.js`;
    return {
      id: row.id,
      agent_id: row.agent_id,
      name: row.name,
      mode: row.mode,
      theme: row.theme,
      allowed_origins: row.allowed_origins,
      embed_url: embedUrl,
      embed_code: `<script src="${embedUrl}" async></script>`,
      created_at: new Date(row.created_at).toISOString(),
      updated_at: new Date(row.updated_at).toISOString(),
    };
  }

  /** The agent of the workspace (422 on agent_id otherwise) and its name. */
  async function requireAgent(ctx: WorkspaceContext, agentId: string) {
    const agent = await db
      .selectFrom('agents')
      .select(['id', 'name'])
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', agentId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!agent) throw invalidField('agent_id', 'no such agent in this workspace');
    return agent;
  }

  function normaliseOrigins(origins: string[]): string[] {
    const errors: FieldError[] = [];
    const out = new Set<string>();
    origins.forEach((value, i) => {
      const origin = normaliseOrigin(value);
      if (origin) out.add(origin);
      else errors.push({ path: `allowed_origins.${i}`, message: 'must be an origin such as https://www.example.com (scheme, host and optional port; no path)' });
    });
    if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors });
    return [...out];
  }

  async function mustFind(ctx: WorkspaceContext, id: string): Promise<WidgetRow> {
    const row = await repo.find(db, ctx.workspaceId, id);
    if (!row) throw notFound('widget');
    return row;
  }

  return {
    present,

    async create(ctx: WorkspaceContext, body: WidgetCreate): Promise<Widget> {
      const agent = await requireAgent(ctx, body.agent_id);
      const values: WidgetValues = {
        agent_id: agent.id,
        name: body.name ?? `${agent.name} widget`.slice(0, 200),
        mode: body.mode ?? 'chat',
        theme: {
          title: body.theme?.title ?? agent.name.slice(0, 100),
          greeting: body.theme?.greeting ?? null,
          primary_color: (body.theme?.primary_color ?? DEFAULT_PRIMARY_COLOR).toLowerCase(),
          position: body.theme?.position ?? 'bottom-right',
        },
        allowed_origins: normaliseOrigins(body.allowed_origins ?? []),
      };
      return present(await repo.insert(db, { id: newId('wdg'), workspaceId: ctx.workspaceId, values, now: clock.now() }));
    },

    async list(ctx: WorkspaceContext, query: WidgetListQuery): Promise<Page<Widget>> {
      const page = pageRequest(query);
      return toPage(await repo.list(db, ctx.workspaceId, page, { agentId: query.agent_id }), page, (r) => r.id, present);
    },

    async get(ctx: WorkspaceContext, id: string): Promise<Widget> {
      return present(await mustFind(ctx, id));
    },

    async update(ctx: WorkspaceContext, id: string, body: WidgetUpdate): Promise<Widget> {
      const current = await mustFind(ctx, id);
      const changes: Partial<WidgetValues> = {};
      if (body.agent_id !== undefined) changes.agent_id = (await requireAgent(ctx, body.agent_id)).id;
      if (body.name !== undefined) changes.name = body.name;
      if (body.mode !== undefined) changes.mode = body.mode;
      if (body.theme !== undefined) {
        const theme = { ...current.theme };
        if (body.theme.title !== undefined) theme.title = body.theme.title;
        if (body.theme.greeting !== undefined) theme.greeting = body.theme.greeting;
        if (body.theme.primary_color !== undefined) theme.primary_color = body.theme.primary_color.toLowerCase();
        if (body.theme.position !== undefined) theme.position = body.theme.position;
        changes.theme = theme;
      }
      if (body.allowed_origins !== undefined) changes.allowed_origins = normaliseOrigins(body.allowed_origins);
      const row = await repo.update(db, ctx.workspaceId, id, changes, clock.now());
      if (!row) throw notFound('widget');
      return present(row);
    },

    async remove(ctx: WorkspaceContext, id: string): Promise<void> {
      if (!(await repo.softDelete(db, ctx.workspaceId, id, clock.now()))) throw notFound('widget');
    },

    async listConversations(ctx: WorkspaceContext, widgetId: string, query: ConversationListQuery) {
      await mustFind(ctx, widgetId);
      const page = pageRequest(query);
      const rows = await repo.listConversations(db, ctx.workspaceId, widgetId, page, { visitorId: query.visitor_id });
      return toPage(rows, page, (r) => r.id, (r) => ({
        id: r.id,
        widget_id: widgetId,
        agent_id: r.agent_id,
        visitor_id: r.visitor_id,
        message_count: Number(r.message_count),
        last_message: r.last_message,
        ended: r.ended,
        created_at: new Date(r.created_at).toISOString(),
        updated_at: new Date(r.updated_at).toISOString(),
      }));
    },

    async getConversation(ctx: WorkspaceContext, widgetId: string, id: string): Promise<WidgetConversationDetail> {
      // Conversations of a deleted widget are gone with it, as the widget is.
      await mustFind(ctx, widgetId);
      const row = await repo.findConversation(db, ctx.workspaceId, widgetId, id);
      if (!row) throw notFound('conversation');
      const turns = row.turns as StoredTurn[];
      return {
        id: row.id,
        widget_id: widgetId,
        agent_id: row.agent_id,
        visitor_id: row.visitor_id,
        message_count: turns.length,
        last_message: turns.at(-1)?.text.slice(0, 200) ?? null,
        ended: row.ended,
        created_at: new Date(row.created_at).toISOString(),
        updated_at: new Date(row.updated_at).toISOString(),
        messages: turns.map((t) => ({ role: t.role, text: t.text, at: t.at })),
      };
    },

    // ---- public (the widget was found live and its Origin checked by the caller) ----

    /** A live widget by id, or 404. */
    async findPublic(id: string): Promise<PublicWidget> {
      const row = await repo.findPublic(db, id);
      if (!row) throw notFound('widget');
      return row;
    },

    config(widget: PublicWidget): WidgetConfig {
      return {
        id: widget.id,
        agent_name: widget.agent_name,
        mode: widget.mode,
        theme: { title: widget.theme.title, primary_color: widget.theme.primary_color, position: widget.theme.position },
        greeting: greetingOf(widget),
      };
    },

    async chat(widget: PublicWidget, body: WidgetChatBody) {
      requireMode(widget.mode, 'chat');
      const result = await deps.agents.converse(
        widget.workspace_id,
        widget.agent_id,
        { message: body.message, conversation_id: body.conversation_id },
        { channel: 'widget', widgetId: widget.id, visitorId: body.visitor_id, greeting: greetingOf(widget) },
      );
      return { conversation_id: result.conversation_id, reply: result.reply, ended: result.ended };
    },

    requireMode,
  };

  /**
   * The widget's greeting, else its agent's first_message when it needs no {{variables}} (a
   * visitor has none to give), else the engine's default line naming the agent.
   */
  function greetingOf(widget: PublicWidget): string {
    if (widget.theme.greeting) return widget.theme.greeting;
    const first = widget.agent_first_message?.trim();
    return first && !/\{\{.*?\}\}/.test(first) ? first : agentGreeting(widget.agent_name);
  }
}

/** 409 when the widget does not offer this channel. */
function requireMode(mode: WidgetMode, wanted: 'chat' | 'voice') {
  if (mode !== 'both' && mode !== wanted) throw invalidState(`this widget is ${mode} only`);
}

export type WidgetsService = ReturnType<typeof createWidgetsService>;
