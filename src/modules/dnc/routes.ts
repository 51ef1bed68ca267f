import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { ListOf, ListQuery, NoContent } from '../../platform/http/schemas.ts';
import { pageRequest } from '../../platform/pagination.ts';
import { DncBody, DncEntry, NumberParams } from './schemas.ts';
import type { DncService } from './service.ts';

// The do-not-call list: GET/POST /v1/dnc, DELETE /v1/dnc/{number}. Adding a listed number again
// is not an error: it answers the entry (200; 201 when new).

const tags = ['do-not-call'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const write = { access: { auth: 'workspace', scope: 'write' } } as const;

export function dncRoutes(service: DncService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/dnc',
      { schema: { operationId: 'listDoNotCall', summary: 'The do-not-call list, newest first', tags, querystring: ListQuery, response: { 200: ListOf(DncEntry, 'DoNotCallList') } }, config: read },
      async (request) => service.list(workspaceOf(request), pageRequest(request.query)),
    );
    app.post(
      '/v1/dnc',
      {
        schema: { operationId: 'addDoNotCall', summary: 'Add a number to the do-not-call list (201; 200 when already listed)', tags, body: DncBody, response: { 200: DncEntry, 201: DncEntry } },
        config: write,
      },
      async (request, reply) => {
        const { entry, created } = await service.add(workspaceOf(request), request.body);
        return reply.code(created ? 201 : 200).send(entry);
      },
    );
    app.delete(
      '/v1/dnc/:number',
      {
        schema: { operationId: 'removeDoNotCall', summary: 'Take a number off the do-not-call list', tags, params: NumberParams, response: { 204: NoContent } },
        config: { ...write, audit: { resourceParam: 'number' } },
      },
      async (request, reply) => {
        await service.remove(workspaceOf(request), request.params.number);
        return reply.code(204).send(null);
      },
    );
  };
}
