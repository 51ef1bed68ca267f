import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, notFound } from '../../platform/errors.ts';
import { IdParams, mediaBody } from '../../platform/http/schemas.ts';
import { idPattern } from '../../platform/ids.ts';
import { NotModified } from '../catalog/schemas.ts';
import { type BrandingService, domainOfHost, presentPublicBranding } from '../branding/service.ts';
import { VoiceSessionCreated } from '../voice/present.ts';
import type { VoiceService } from '../voice/service.ts';
import { answerCors, originAllowed } from './origin.ts';
import { previewPage } from './preview.ts';
import { WidgetChatBody, WidgetChatReply, WidgetConfig, WidgetVoiceBody } from './schemas.ts';
import type { PublicWidget, WidgetsService } from './service.ts';

// The public widget endpoints (no credentials; 30/min per IP with every public route): config,
// embed.js, chat, preview and voice, plus their CORS preflight. Each finds the live widget and
// checks the request's Origin against its allowed_origins before anything else (origin.ts).

const tags = ['widgets'];
const WIDGET_ID = new RegExp(idPattern('wdg'));
const Params = IdParams('Widget id (wdg_…)');
/** Public and per-IP limited; the global CORS plugin is off: the widget answers its own CORS. */
const open = { access: { auth: 'public' }, cors: false } as const;
/** A chat or voice body is small; anything larger is refused before it is parsed (413). */
const SMALL_BODY = 16 * 1024;

export const EMBED_SCRIPT_PATH = path.resolve(import.meta.dirname, '../../../web/widget/embed.js');

function loadEmbedScript() {
  const source = fs.readFileSync(EMBED_SCRIPT_PATH);
  return { source, etag: `"${createHash('sha256').update(source).digest('base64url').slice(0, 27)}"` };
}

export function publicWidgetRoutes(service: WidgetsService, deps: { branding: BrandingService; voice: VoiceService }): FastifyPluginAsyncTypebox {
  const { branding, voice } = deps;
  const embed = loadEmbedScript();
  const found = new WeakMap<FastifyRequest, PublicWidget>();

  /** Runs after the gate (rate limit): the live widget, then its Origin rule, then CORS headers. */
  async function guard(request: FastifyRequest, reply: FastifyReply) {
    const id = (request.params as { id?: string }).id ?? '';
    if (!WIDGET_ID.test(id)) throw notFound('widget');
    const widget = await service.findPublic(id);
    const origin = request.headers.origin;
    if (!originAllowed(widget.allowed_origins, origin, request.headers.host)) {
      throw new AppError('forbidden', `this widget is not allowed on ${String(origin).slice(0, 200)}; add the origin to its allowed_origins`);
    }
    answerCors(request, reply);
    found.set(request, widget);
  }

  const widgetOf = (request: FastifyRequest): PublicWidget => {
    const widget = found.get(request);
    if (!widget) throw new AppError('internal', 'widget route without its guard');
    return widget;
  };

  return async (app) => {
    app.get(
      '/v1/widgets/:id/config',
      {
        schema: { operationId: 'getWidgetConfig', summary: 'What the embed script needs: agent name, mode, theme and greeting (public; never the prompt)', tags, params: Params, response: { 200: WidgetConfig } },
        config: open,
        onRequest: guard,
      },
      async (request) => service.config(widgetOf(request)),
    );

    app.get(
      '/v1/widgets/:id/embed.js',
      {
        schema: {
          operationId: 'getWidgetEmbedScript',
          summary: 'The widget script (public): `<script src="…/embed.js" async>` adds a chat button and panel to the page; cached a day, ETag',
          tags,
          params: Params,
          response: { 200: mediaBody('text/javascript', 'The widget script'), 304: NotModified },
        },
        config: open,
        onRequest: guard,
      },
      async (request, reply) => {
        reply.header('Cache-Control', 'public, max-age=86400').header('ETag', embed.etag);
        const match = request.headers['if-none-match'];
        if (match?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === embed.etag)) return reply.code(304).send(null);
        return reply.type('text/javascript; charset=utf-8').send(embed.source as unknown as string);
      },
    );

    app.post(
      '/v1/widgets/:id/chat',
      {
        schema: {
          operationId: 'chatWithWidget',
          summary: 'Send a visitor message (public, ≤ 2,000 characters); pass conversation_id back to continue',
          tags,
          params: Params,
          body: WidgetChatBody,
          response: { 200: WidgetChatReply },
        },
        config: open,
        bodyLimit: SMALL_BODY,
        onRequest: guard,
      },
      async (request) => service.chat(widgetOf(request), request.body),
    );

    app.get(
      '/v1/widgets/:id/preview',
      {
        schema: {
          operationId: 'previewWidget',
          summary: 'The widget on a neutral HTML page, under the branding of the domain it is served on (public)',
          tags,
          params: Params,
          response: { 200: mediaBody('text/html', 'HTML page') },
        },
        config: open,
        onRequest: guard,
      },
      async (request, reply) => {
        const widget = widgetOf(request);
        const domain = domainOfHost(request.headers.host);
        const row = domain ? await branding.forDomain(domain) : undefined;
        const html = previewPage({ widgetId: widget.id, widgetName: widget.theme.title, branding: row ? presentPublicBranding(row) : undefined });
        return reply
          .type('text/html; charset=utf-8')
          .header('Cache-Control', 'no-store')
          .header('X-Content-Type-Options', 'nosniff')
          .header(
            'Content-Security-Policy',
            "default-src 'self'; script-src 'self' blob:; style-src 'self' 'unsafe-inline'; img-src * data:; connect-src 'self' ws: wss:; media-src 'self' blob:; base-uri 'none'; form-action 'none'",
          )
          .send(html);
      },
    );

    app.post(
      '/v1/widgets/:id/voice',
      {
        schema: {
          operationId: 'startWidgetVoice',
          summary: 'Start a web voice session with the widget agent (public; billed to the workspace): the voice-session object with its media token',
          tags,
          params: Params,
          body: WidgetVoiceBody,
          response: { 201: VoiceSessionCreated },
        },
        config: open,
        bodyLimit: SMALL_BODY,
        onRequest: guard,
      },
      async (request, reply) => {
        const widget = widgetOf(request);
        service.requireMode(widget.mode, 'voice');
        const { row, token } = await voice.create(
          widget.workspace_id,
          { agent_id: widget.agent_id, external_user_id: request.body?.visitor_id, metadata: { widget_id: widget.id } },
          { builtin: true },
        );
        return reply.code(201).send({ ...(await voice.present(row)), token });
      },
    );

    // CORS preflight of the public endpoints (a browser asks before a JSON POST): the same Origin
    // rule; not an API operation (kept out of openapi.json).
    app.options(
      '/v1/widgets/:id/:endpoint',
      { schema: { hide: true, operationId: 'widgetPreflight', params: Type.Object({ id: Type.String({ maxLength: 100 }), endpoint: Type.String({ maxLength: 20 }) }) }, config: open, onRequest: guard },
      async (_request, reply) => reply.code(204).send(),
    );
  };
}
