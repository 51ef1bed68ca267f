import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { invalidField } from '../../platform/errors.ts';
import { registerMultipartForm } from '../../platform/http/multipart-form.ts';
import { ListQuery, NoContent } from '../../platform/http/schemas.ts';
import { pageRequest } from '../../platform/pagination.ts';
import {
  KbParams,
  KnowledgeBase,
  KnowledgeBaseCreate,
  KnowledgeBaseList,
  KnowledgeBaseUpdate,
  KnowledgeChunkList,
  KnowledgeSource,
  KnowledgeSourceList,
  QueryBody,
  QueryResponse,
  SourceCreateJson,
  SourceCreateMultipart,
  SourceParams,
} from './schemas.ts';
import { type KnowledgeBaseService, MAX_FILE_BYTES, type UploadedFile } from './service.ts';

const TAGS = ['knowledge-base'];
const WRITE = { auth: 'workspace', scope: 'write' } as const;
const READ = { auth: 'workspace', scope: 'read-only' } as const;

/** `detachFromAgents`: the agents' repo's, from the composition root (agents depend on knowledge bases). */
export function knowledgeBaseRoutes(service: KnowledgeBaseService): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Multipart only here (file sources); text/plain bodies are not accepted by this module.
    // Parts are read before validation: the file is buffered (≤ 20 MiB, else 413) aside, and the
    // body keeps `file: "sha256:<hex>"`, so the form is validated by its schema (unknown fields are
    // 422) and Idempotency-Key compares uploads by content.
    const uploads = new WeakMap<object, UploadedFile>();
    await registerMultipartForm(app, {
      limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 5, parts: 6, fieldSize: 4096 },
      async onFile(request, part) {
        const bytes = await part.toBuffer();
        if (part.fieldname === 'file') uploads.set(request, { filename: part.filename, mimetype: part.mimetype, bytes });
        return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      },
    });
    app.removeContentTypeParser('text/plain');

    app.post(
      '/v1/knowledge-base',
      {
        schema: { operationId: 'createKnowledgeBase', summary: 'Create a knowledge base', tags: TAGS, body: KnowledgeBaseCreate, response: { 201: KnowledgeBase } },
        config: { access: WRITE },
      },
      async (request, reply) => {
        const created = await service.create(workspaceOf(request), request.body);
        request.auditResourceId = created.id;
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/v1/knowledge-base',
      {
        schema: { operationId: 'listKnowledgeBases', summary: 'List knowledge bases, newest first', tags: TAGS, querystring: ListQuery, response: { 200: KnowledgeBaseList } },
        config: { access: READ },
      },
      async (request) => service.list(workspaceOf(request), pageRequest(request.query)),
    );

    app.get(
      '/v1/knowledge-base/:id',
      {
        schema: { operationId: 'getKnowledgeBase', summary: 'Get a knowledge base with its source and chunk counts', tags: TAGS, params: KbParams, response: { 200: KnowledgeBase } },
        config: { access: READ },
      },
      async (request) => service.get(workspaceOf(request), request.params.id),
    );

    app.patch(
      '/v1/knowledge-base/:id',
      {
        schema: { operationId: 'updateKnowledgeBase', summary: 'Rename, describe or change the language of a knowledge base', tags: TAGS, params: KbParams, body: KnowledgeBaseUpdate, response: { 200: KnowledgeBase } },
        config: { access: WRITE },
      },
      async (request) => service.update(workspaceOf(request), request.params.id, request.body),
    );

    app.delete(
      '/v1/knowledge-base/:id',
      {
        schema: { operationId: 'deleteKnowledgeBase', summary: 'Delete a knowledge base with its sources and chunks', tags: TAGS, params: KbParams, response: { 204: NoContent } },
        config: { access: WRITE },
      },
      async (request, reply) => {
        await service.remove(workspaceOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/knowledge-base/:id/sources',
      {
        schema: {
          operationId: 'addKnowledgeSource',
          summary: 'Add a source: JSON {type:"text", title, text} or {type:"url", url, title?}, or a multipart file (txt, md, html, pdf, docx, csv; at most 20 MiB)',
          description:
            'Text and files are indexed within the request (status ready on return). A URL is fetched through the SSRF guard within the request: the source is ready, or failed with an error (refresh retries it). A URL pointing to a private address is refused with 422.',
          tags: TAGS,
          params: KbParams,
          body: {
            content: {
              'application/json': { schema: SourceCreateJson },
              'multipart/form-data': { schema: SourceCreateMultipart },
            },
          } as never,
          response: { 201: KnowledgeSource },
        },
        config: { access: WRITE },
      },
      async (request, reply) => {
        const ctx = workspaceOf(request);
        let created: KnowledgeSource;
        if (request.isMultipart()) {
          const file = uploads.get(request);
          if (!file) throw invalidField('file', 'must be a file part');
          const { title } = request.body as { title?: string };
          created = await service.addFileSource(ctx, request.params.id, { ...file, title });
        } else {
          created = await service.addJsonSource(ctx, request.params.id, request.body as SourceCreateJson);
        }
        request.auditResourceId = created.id;
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/v1/knowledge-base/:id/sources',
      {
        schema: { operationId: 'listKnowledgeSources', summary: 'List the sources of a knowledge base, newest first', tags: TAGS, params: KbParams, querystring: ListQuery, response: { 200: KnowledgeSourceList } },
        config: { access: READ },
      },
      async (request) => service.listSources(workspaceOf(request), request.params.id, pageRequest(request.query)),
    );

    app.get(
      '/v1/knowledge-base/:id/sources/:src',
      {
        schema: { operationId: 'getKnowledgeSource', summary: 'Get a source and its ingestion status', tags: TAGS, params: SourceParams, response: { 200: KnowledgeSource } },
        config: { access: READ },
      },
      async (request) => service.getSource(workspaceOf(request), request.params.id, request.params.src),
    );

    app.delete(
      '/v1/knowledge-base/:id/sources/:src',
      {
        schema: { operationId: 'deleteKnowledgeSource', summary: 'Delete a source; its chunks leave search results at once', tags: TAGS, params: SourceParams, response: { 204: NoContent } },
        config: { access: WRITE, audit: { resourceParam: 'src' } },
      },
      async (request, reply) => {
        await service.deleteSource(workspaceOf(request), request.params.id, request.params.src);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/knowledge-base/:id/sources/:src/refresh',
      {
        schema: {
          operationId: 'refreshKnowledgeSource',
          summary: 'Re-fetch a URL source, or re-chunk and re-embed a text or file source',
          description: 'A failed refresh keeps the previous chunks searchable and records the error on the source. 409 invalid_state while the source is being processed.',
          tags: TAGS,
          params: SourceParams,
          response: { 200: KnowledgeSource },
        },
        config: { access: WRITE, audit: { resourceParam: 'src' } },
      },
      async (request) => service.refreshSource(workspaceOf(request), request.params.id, request.params.src),
    );

    app.get(
      '/v1/knowledge-base/:id/sources/:src/chunks',
      {
        schema: { operationId: 'listKnowledgeChunks', summary: 'List the chunks of a source in document order', tags: TAGS, params: SourceParams, querystring: ListQuery, response: { 200: KnowledgeChunkList } },
        config: { access: READ },
      },
      async (request) => service.listChunks(workspaceOf(request), request.params.id, request.params.src, pageRequest(request.query)),
    );

    app.post(
      '/v1/knowledge-base/:id/query',
      {
        schema: {
          operationId: 'queryKnowledgeBase',
          summary: 'Search a knowledge base: full-text (any of the query terms, ranked by cover density) blended with embedding similarity when configured',
          tags: TAGS,
          params: KbParams,
          body: QueryBody,
          response: { 200: QueryResponse },
        },
        config: { access: WRITE },
      },
      async (request) => service.query(workspaceOf(request), request.params.id, request.body.query, request.body.top_k ?? 5),
    );
  };
}
