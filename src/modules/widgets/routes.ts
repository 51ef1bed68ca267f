import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { IdParams, ListOf, NoContent } from '../../platform/http/schemas.ts';
import type { BrandingService } from '../branding/service.ts';
import type { VoiceService } from '../voice/service.ts';
import { publicWidgetRoutes } from './public-routes.ts';
import type { WidgetsService } from './service.ts';
import {
  ConversationListQuery,
  Widget,
  WidgetConversation,
  WidgetConversationDetail,
  WidgetCreate,
  WidgetListQuery,
  WidgetUpdate,
} from './schemas.ts';

// Widgets: the owner's operations (CRUD, conversations). The public ones (config, embed.js,
// chat, preview, voice) are in public-routes.ts.

const tags = ['widgets'];
const write = { access: { auth: 'workspace', scope: 'write' } } as const;
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const WidgetParams = IdParams('Widget id (wdg_…)');

/** `deps`: what the public endpoints use beside the widgets service (the preview's branding, the voice sessions). */
export function widgetsRoutes(service: WidgetsService, deps: { branding: BrandingService; voice: VoiceService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/widgets',
      { schema: { operationId: 'createWidget', summary: 'Create a widget embedding an agent in web pages', tags, body: WidgetCreate, response: { 201: Widget } }, config: write },
      async (request, reply) => {
        const created = await service.create(workspaceOf(request), request.body);
        request.auditResourceId = created.id;
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/v1/widgets',
      { schema: { operationId: 'listWidgets', summary: 'List widgets, newest first', tags, querystring: WidgetListQuery, response: { 200: ListOf(Widget, 'WidgetList') } }, config: read },
      async (request) => service.list(workspaceOf(request), request.query),
    );

    app.get(
      '/v1/widgets/:id',
      { schema: { operationId: 'getWidget', summary: 'Get a widget', tags, params: WidgetParams, response: { 200: Widget } }, config: read },
      async (request) => service.get(workspaceOf(request), request.params.id),
    );

    app.patch(
      '/v1/widgets/:id',
      { schema: { operationId: 'updateWidget', summary: 'Change some fields of a widget (theme is merged)', tags, params: WidgetParams, body: WidgetUpdate, response: { 200: Widget } }, config: write },
      async (request) => service.update(workspaceOf(request), request.params.id, request.body),
    );

    app.delete(
      '/v1/widgets/:id',
      { schema: { operationId: 'deleteWidget', summary: 'Delete a widget: its script, config and chat stop answering (404)', tags, params: WidgetParams, response: { 204: NoContent } }, config: write },
      async (request, reply) => {
        await service.remove(workspaceOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v1/widgets/:id/conversations',
      {
        schema: {
          operationId: 'listWidgetConversations',
          summary: "The widget's chat conversations, newest first (filter by visitor_id)",
          tags,
          params: WidgetParams,
          querystring: ConversationListQuery,
          response: { 200: ListOf(WidgetConversation, 'WidgetConversationList') },
        },
        config: read,
      },
      async (request) => service.listConversations(workspaceOf(request), request.params.id, request.query),
    );

    app.get(
      '/v1/widgets/:id/conversations/:conv_id',
      {
        schema: {
          operationId: 'getWidgetConversation',
          summary: 'One conversation of the widget, every message',
          tags,
          params: Type.Object({ id: WidgetParams.properties.id, conv_id: Type.String({ maxLength: 100, description: 'Conversation id (conv_…)' }) }),
          response: { 200: WidgetConversationDetail },
        },
        config: { access: { auth: 'workspace', scope: 'read-only' } },
      },
      async (request) => service.getConversation(workspaceOf(request), request.params.id, request.params.conv_id),
    );

    await app.register(publicWidgetRoutes(service, deps));
  };
}
