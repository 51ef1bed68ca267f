import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AgentTemplateList, Mp3Audio, NotModified, PreviewQuery, VoiceList, VoiceListQuery, VoiceParams } from './schemas.ts';
import type { CatalogService } from './service.ts';

// Catalog routes: read-only workspace routes like the rest of the authenticated API (DESIGN part
// 7 marks only some routes public, and these are not among them).

const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;

export function catalogRoutes(service: CatalogService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/voices',
      {
        schema: {
          operationId: 'listVoices',
          summary: 'Voices an agent can use: the built-in voices and those of configured TTS providers',
          tags: ['catalog'],
          querystring: VoiceListQuery,
          response: { 200: VoiceList },
        },
        config: read,
      },
      async (request) => service.listVoices(request.query),
    );

    app.get(
      '/v1/voices/:id/preview',
      {
        schema: {
          operationId: 'previewVoice',
          summary: 'An MP3 of the voice speaking a sample sentence (or ?text=)',
          tags: ['catalog'],
          params: VoiceParams,
          querystring: PreviewQuery,
          response: { 200: Mp3Audio, 304: NotModified },
        },
        config: read,
      },
      async (request, reply) => {
        const audio = await service.preview(request.params.id, request.query.text);
        reply.header('cache-control', 'private, max-age=86400').header('etag', audio.etag);
        if (request.headers['if-none-match'] === audio.etag) return reply.code(304).send(null);
        // A Buffer is sent as is (no serialisation); the schema only documents it.
        return reply.type('audio/mpeg').send(audio.bytes as unknown as string);
      },
    );

    app.get(
      '/v1/agent-templates',
      {
        schema: {
          operationId: 'listAgentTemplates',
          summary: 'Ready-made agents; each template.agent is a valid POST /v1/agents body',
          tags: ['catalog'],
          response: { 200: AgentTemplateList },
        },
        config: read,
      },
      async () => service.listTemplates(),
    );
  };
}
