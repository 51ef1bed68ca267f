import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Access } from '../../platform/auth/access.ts';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { NoContent } from '../../platform/http/schemas.ts';
import { ApiKey, ApiKeyCreate, ApiKeyList, ApiKeyListQuery, ApiKeyParams, ApiKeyUpdate, ApiKeyWithSecret } from './schemas.ts';
import type { ApiKeysService } from './service.ts';

// Managing keys needs a user (JWT) who is an owner or admin of the workspace: a key cannot mint
// or revoke keys, so a leaked key cannot entrench itself.
const MANAGE: Access = { auth: 'workspace', scope: 'admin', userOnly: true };

export function apiKeysRoutes(service: ApiKeysService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/api-keys',
      {
        schema: {
          operationId: 'createApiKey',
          summary: 'Create an API key; the key is in this response only',
          tags: ['api-keys'],
          body: ApiKeyCreate,
          response: { 201: ApiKeyWithSecret },
        },
        config: { access: MANAGE },
      },
      async (request, reply) => {
        const created = await service.create(workspaceOf(request), request.body);
        request.auditResourceId = created.id;
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/v1/api-keys',
      {
        schema: {
          operationId: 'listApiKeys',
          summary: "List the current workspace's API keys (revoked ones included), newest first",
          tags: ['api-keys'],
          querystring: ApiKeyListQuery,
          response: { 200: ApiKeyList },
        },
        config: { access: MANAGE },
      },
      async (request) => service.list(workspaceOf(request), request.query),
    );

    app.get(
      '/v1/api-keys/:id',
      {
        schema: {
          operationId: 'getApiKey',
          summary: 'Get an API key (never the key itself)',
          tags: ['api-keys'],
          params: ApiKeyParams,
          response: { 200: ApiKey },
        },
        config: { access: MANAGE },
      },
      async (request) => service.get(workspaceOf(request), request.params.id),
    );

    app.patch(
      '/v1/api-keys/:id',
      {
        schema: {
          operationId: 'updateApiKey',
          summary: 'Rename an API key (its scope is fixed at creation)',
          tags: ['api-keys'],
          params: ApiKeyParams,
          body: ApiKeyUpdate,
          response: { 200: ApiKey },
        },
        config: { access: MANAGE },
      },
      async (request) => service.update(workspaceOf(request), request.params.id, request.body),
    );

    app.delete(
      '/v1/api-keys/:id',
      {
        schema: {
          operationId: 'revokeApiKey',
          summary: 'Revoke an API key; the next request made with it is 401',
          tags: ['api-keys'],
          params: ApiKeyParams,
          response: { 204: NoContent },
        },
        config: { access: MANAGE },
      },
      async (request, reply) => {
        await service.revoke(workspaceOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
