import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { IdParams, ListOf, NoContent } from '../../platform/http/schemas.ts';
import { pageRequest } from '../../platform/pagination.ts';
import { AcquireBody, AssignBody, AvailableNumber, AvailableQuery, PhoneNumber, PhoneNumberListQuery, PhoneNumberUpdate } from './schemas.ts';
import type { PhoneNumbersService } from './service.ts';

const tags = ['phone numbers'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const write = { access: { auth: 'workspace', scope: 'write' } } as const;
const Params = IdParams('Phone number id (pn_…)');

export function phoneNumbersRoutes(service: PhoneNumbersService): FastifyPluginAsyncTypebox {
  const ws = (request: Parameters<typeof workspaceOf>[0]) => workspaceOf(request).workspaceId;

  return async (app) => {
    app.get(
      '/v1/phone-numbers',
      { schema: { operationId: 'listPhoneNumbers', summary: "The workspace's phone numbers, newest first", tags, querystring: PhoneNumberListQuery, response: { 200: ListOf(PhoneNumber, 'PhoneNumberList') } }, config: read },
      async (request) => service.list(ws(request), pageRequest(request.query), request.query.agent_id),
    );
    app.get(
      '/v1/phone-numbers/available',
      {
        schema: { operationId: 'searchAvailablePhoneNumbers', summary: "Numbers for sale at the provider (country, area code, digits it contains)", tags, querystring: AvailableQuery, response: { 200: Type.Object({ data: Type.Array(AvailableNumber) }, { title: 'AvailablePhoneNumbers' }) } },
        config: read,
      },
      async (request) => service.available(request.query),
    );
    app.post(
      '/v1/phone-numbers/buy',
      { schema: { operationId: 'buyPhoneNumber', summary: 'Buy a number; its first month is debited from the wallet (402 when short)', tags, body: AcquireBody, response: { 201: PhoneNumber } }, config: write },
      async (request, reply) => {
        const bought = await service.buy(ws(request), request.body);
        request.auditResourceId = bought.id;
        return reply.code(201).send(bought);
      },
    );
    app.post(
      '/v1/phone-numbers/import',
      { schema: { operationId: 'importPhoneNumber', summary: 'Bring a number already held at the provider (no charge here)', tags, body: AcquireBody, response: { 201: PhoneNumber } }, config: write },
      async (request, reply) => {
        const imported = await service.import(ws(request), request.body);
        request.auditResourceId = imported.id;
        return reply.code(201).send(imported);
      },
    );
    app.get(
      '/v1/phone-numbers/:id',
      { schema: { operationId: 'getPhoneNumber', summary: 'Get a phone number', tags, params: Params, response: { 200: PhoneNumber } }, config: read },
      async (request) => service.get(ws(request), request.params.id),
    );
    app.patch(
      '/v1/phone-numbers/:id',
      { schema: { operationId: 'updatePhoneNumber', summary: 'Change the label or the agent (null unassigns)', tags, params: Params, body: PhoneNumberUpdate, response: { 200: PhoneNumber } }, config: write },
      async (request) => service.update(ws(request), request.params.id, request.body),
    );
    app.delete(
      '/v1/phone-numbers/:id',
      { schema: { operationId: 'releasePhoneNumber', summary: 'Release a number (409 while a call on it is live); then it is gone (404)', tags, params: Params, response: { 204: NoContent } }, config: write },
      async (request, reply) => {
        await service.release(ws(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
    app.post(
      '/v1/phone-numbers/:id/assign',
      { schema: { operationId: 'assignPhoneNumber', summary: 'Assign the number to an agent: inbound calls to it start that agent', tags, params: Params, body: AssignBody, response: { 200: PhoneNumber } }, config: write },
      async (request) => service.update(ws(request), request.params.id, { agent_id: request.body.agent_id }),
    );
    app.post(
      '/v1/phone-numbers/:id/unassign',
      { schema: { operationId: 'unassignPhoneNumber', summary: 'Take the number off its agent', tags, params: Params, response: { 200: PhoneNumber } }, config: write },
      async (request) => service.update(ws(request), request.params.id, { agent_id: null }),
    );
  };
}
