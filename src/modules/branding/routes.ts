import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { notFound } from '../../platform/errors.ts';
import { NoContent } from '../../platform/http/schemas.ts';
import { Branding, BrandingBody, PublicBranding } from './schemas.ts';
import { type BrandingService, presentPublicBranding } from './service.ts';

// White-label branding: the workspace's own (admin) and the public lookup by domain.

const tags = ['branding'];
const admin = { access: { auth: 'workspace', scope: 'admin' } } as const;

export function brandingRoutes(service: BrandingService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/branding',
      { schema: { operationId: 'getBranding', summary: "The workspace's white-label branding (404 when none is set)", tags, response: { 200: Branding } }, config: admin },
      async (request) => service.get(workspaceOf(request)),
    );

    app.put(
      '/v1/branding',
      {
        schema: {
          operationId: 'putBranding',
          summary: "Set the workspace's white-label branding (the whole of it); a domain branded by another workspace is 409",
          tags,
          body: BrandingBody,
          response: { 200: Branding },
        },
        config: admin,
      },
      async (request) => service.put(workspaceOf(request), request.body),
    );

    app.delete(
      '/v1/branding',
      { schema: { operationId: 'deleteBranding', summary: "Remove the workspace's branding (its domain is free again)", tags, response: { 204: NoContent } }, config: admin },
      async (request, reply) => {
        await service.remove(workspaceOf(request));
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v1/branding/:domain',
      {
        schema: {
          operationId: 'getBrandingByDomain',
          summary: 'The branding of a domain (public; 404 when no workspace brands it)',
          tags,
          params: Type.Object({ domain: Type.String({ minLength: 1, maxLength: 253, description: 'Host name, e.g. voice.example.com' }) }),
          response: { 200: PublicBranding },
        },
        config: { access: { auth: 'public' } },
      },
      async (request) => {
        const row = await service.forDomain(request.params.domain);
        if (!row) throw notFound('branding');
        return presentPublicBranding(row);
      },
    );
  };
}
