import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { invalidField, notFound } from '../../platform/errors.ts';
import { ListOf, ListQuery, NoContent, Nullable, Timestamp } from '../../platform/http/schemas.ts';
import { pageRequest, toPage } from '../../platform/pagination.ts';
import type { Platform } from '../../platform/platform.ts';
import { toE164 } from '../../platform/phone.ts';
import { createDncRepo } from './repo.ts';

// The do-not-call list: GET/POST /v1/dnc, DELETE /v1/dnc/{number}. Adding a listed number again
// is not an error: it answers the entry (200; 201 when new).

const tags = ['do-not-call'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const write = { access: { auth: 'workspace', scope: 'write' } } as const;

const DncEntry = Type.Object(
  { number: Type.String({ examples: ['+15550100222'] }), reason: Nullable(Type.String()), created_at: Timestamp },
  { title: 'DoNotCallEntry' },
);
const DncBody = Type.Object(
  { number: Type.String({ minLength: 3, maxLength: 32, description: 'Phone number, normalised to E.164' }), reason: Type.Optional(Type.String({ maxLength: 500 })) },
  { additionalProperties: false },
);
const NumberParams = Type.Object({ number: Type.String({ maxLength: 40, description: 'E.164 number, URL-encoded (%2B for +)' }) });

type Row = { number: string; reason: string | null; created_at: Date | string };
const present = (row: Row): Static<typeof DncEntry> => ({ number: row.number, reason: row.reason, created_at: new Date(row.created_at).toISOString() });

function e164(raw: string, path: string): string {
  const number = toE164(raw);
  if (!number) throw invalidField(path, 'must be a possible phone number (E.164, e.g. +15550100200)');
  return number;
}

export function dncRoutes(platform: Platform): FastifyPluginAsyncTypebox {
  const repo = createDncRepo(platform.db);
  return async (app) => {
    app.get(
      '/v1/dnc',
      { schema: { operationId: 'listDoNotCall', summary: 'The do-not-call list, newest first', tags, querystring: ListQuery, response: { 200: ListOf(DncEntry, 'DoNotCallList') } }, config: read },
      async (request) => {
        const page = pageRequest(request.query);
        const rows = await repo.list(workspaceOf(request).workspaceId, page);
        return toPage(rows, page, (r) => `${new Date(r.created_at).toISOString()}|${r.number}`, present);
      },
    );
    app.post(
      '/v1/dnc',
      {
        schema: { operationId: 'addDoNotCall', summary: 'Add a number to the do-not-call list (201; 200 when already listed)', tags, body: DncBody, response: { 200: DncEntry, 201: DncEntry } },
        config: write,
      },
      async (request, reply) => {
        const { row, created } = await repo.add(workspaceOf(request).workspaceId, e164(request.body.number, 'number'), request.body.reason ?? null, platform.clock.now());
        return reply.code(created ? 201 : 200).send(present(row));
      },
    );
    app.delete(
      '/v1/dnc/:number',
      {
        schema: { operationId: 'removeDoNotCall', summary: 'Take a number off the do-not-call list', tags, params: NumberParams, response: { 204: NoContent } },
        config: { ...write, audit: { resourceParam: 'number' } },
      },
      async (request, reply) => {
        const number = toE164(request.params.number);
        if (!number || !(await repo.remove(workspaceOf(request).workspaceId, number))) throw notFound('do-not-call entry');
        return reply.code(204).send(null);
      },
    );
  };
}
