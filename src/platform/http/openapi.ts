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
    // Reads write no audit row (audit.ts): an audit setting on one would be dead configuration.
    if (route.config?.audit && route.method === 'GET') throw new Error(`route GET ${route.url} declares config.audit, but reads are not audited`);
    if (access.auth === 'public') schema.security = [];
    const limited = !(access.auth === 'public' && access.limit === 'none');
    schema.response = withErrors((schema.response ?? {}) as Record<number, unknown>, { limited });
  });
}

/**
 * The request headers the gate and the idempotency store read, documented on the operations
 * that honour them (OpenAPI only; they are checked where they are used, not by the schema):
 * `X-Workspace-Id` on workspace routes that do not name their workspace in the path, and
 * `Idempotency-Key` on every POST.
 */
function withRequestHeaders(schema: Record<string, unknown>, route: RouteOptions) {
  if (!schema || !route.url.startsWith('/v1/')) return schema;
  const access = route.config?.access as Access | undefined;
  const methods = ([] as string[]).concat(route.method);
  const extra: Record<string, unknown> = {};
  if (access?.auth === 'workspace' && !access.workspaceParam) {
    extra['X-Workspace-Id'] = {
      type: 'string',
      description: "Workspace to act in, for a user's access token (default: the user's first workspace). An API key always acts in its own workspace.",
    };
  }
  if (methods.includes('POST')) {
    extra['Idempotency-Key'] = {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'Makes a retry safe: the same key and request within 24 h replays the first response (Idempotent-Replayed: true); another request with the key is 422 idempotency_key_reused; one still in flight is 409.',
    };
  }
  if (Object.keys(extra).length === 0) return schema;
  const headers = (schema.headers ?? { type: 'object', properties: {} }) as { properties?: Record<string, unknown> };
  return { ...schema, headers: { ...headers, properties: { ...extra, ...headers.properties } } };
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
    transform: ({ schema, url, route }) => ({ schema: withRequestHeaders(schema as Record<string, unknown>, route as RouteOptions) as typeof schema, url }),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `schema${i}`),
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
}
