import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { Access } from '../auth/access.ts';
import { ProblemSchema, withErrors } from './schemas.ts';

// OpenAPI 3.1 generated from the route schemas; served at /openapi.json, browsable at /docs.
// The onRoute hook below is the one place that enforces the route conventions: every /v1 route
// declares access and an operationId, and gets the shared problem+json error responses.

export const API_VERSION = '1.4.0';

export interface OpenApiExtras {
  /** Top-level `webhooks` (the events the platform sends); filled by the events engine. */
  webhooks?: Record<string, unknown>;
  /** Extra component schemas referenced by the webhooks section. */
  schemas?: Record<string, unknown>;
}

export function enforceRouteConventions(app: FastifyInstance) {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.url.startsWith('/v1/') || route.method === 'HEAD') return;
    const access = route.config?.access as Access | undefined;
    route.schema = route.schema ?? {};
    const schema = route.schema as Record<string, unknown>;
    if (!access) throw new Error(`route ${route.method} ${route.url} does not declare config.access`);
    if (!schema.operationId) throw new Error(`route ${route.method} ${route.url} has no operationId`);
    if (access.auth === 'public') schema.security = [];
    const limited = !(access.auth === 'public' && access.limit === 'none');
    schema.response = withErrors((schema.response ?? {}) as Record<number, unknown>, { limited });
  });
}

export async function registerOpenApi(app: FastifyInstance, options: { publicBaseUrl: string; extras?: OpenApiExtras }) {
  app.addSchema(ProblemSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Voice Agent Platform API',
        version: API_VERSION,
        description:
          'Build AI phone and web voice agents. Authenticate with `Authorization: Bearer <JWT or sk_ API key>`. Errors are RFC 9457 problem+json.',
      },
      servers: [{ url: options.publicBaseUrl }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A JWT access token from /v1/auth/login or an sk_ API key' },
        },
        schemas: (options.extras?.schemas ?? {}) as never,
      },
      security: [{ bearerAuth: [] }],
      ...(options.extras?.webhooks ? { webhooks: options.extras.webhooks } : {}),
    } as never,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `schema${i}`),
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
}
