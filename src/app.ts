import { randomBytes } from 'node:crypto';
import cors from '@fastify/cors';
import websocket from '@fastify/websocket';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import { registerAuditTrail } from './platform/audit.ts';
import { registerAuthentication } from './platform/auth/authenticate.ts';
import type { Clock } from './platform/clock.ts';
import type { DatabaseHandle } from './platform/db/database.ts';
import { registerErrorHandling } from './platform/http/error-handler.ts';
import { clientErrorHandlerFor, frameworkErrors, registerInputGuard } from './platform/http/input-guard.ts';
import { registerErrorDocs } from './platform/http/error-docs.ts';
import { lazySerializerFactory } from './platform/http/lazy-serializers.ts';
import { enforceRouteConventions, registerOpenApi } from './platform/http/openapi.ts';
import { registerValidation } from './platform/http/validation.ts';
import { registerIdempotency } from './platform/idempotency.ts';
import { createLogger, withLogSerializers } from './platform/logging.ts';
import type { Mailer } from './platform/mailer.ts';
import { registerMetrics } from './platform/metrics.ts';
import { createPlatform, type Platform } from './platform/platform.ts';
import type { StartupPhases } from './platform/startup-phases.ts';
import { registerHttpTracing } from './platform/telemetry/http.ts';
import { createTelemetry } from './platform/telemetry/telemetry.ts';
import { createProviders, type ProviderOverrides } from './providers/index.ts';
import { createScaledClock } from './runtime/clock.ts';
import { createVirtualClock } from './runtime/virtual-clock.ts';
import { healthRoutes } from './modules/health/routes.ts';
import { authRoutes } from './modules/auth/routes.ts';
import { workspacesRoutes } from './modules/workspaces/routes.ts';
import { invitationsRoutes } from './modules/invitations/routes.ts';
import { apiKeysRoutes } from './modules/api-keys/routes.ts';
import { auditLogRoutes } from './modules/audit-log/routes.ts';
import { webhooksRoutes } from './modules/webhooks/routes.ts';
import { webhooksOpenApi } from './modules/webhooks/openapi.ts';
import { agentsRoutes } from './modules/agents/routes.ts';
import { createAgentsRepo } from './modules/agents/repo.ts';
import { catalogRoutes } from './modules/catalog/routes.ts';
import { knowledgeBaseRoutes } from './modules/knowledge-base/routes.ts';
import { callsRoutes } from './modules/calls/routes.ts';
import { phoneNumbersRoutes } from './modules/phone-numbers/routes.ts';
import { dncRoutes } from './modules/dnc/routes.ts';
import { analyticsRoutes } from './modules/analytics/routes.ts';
import { telephonyRoutes } from './modules/telephony/routes.ts';
import { walletRoutes } from './modules/wallet/routes.ts';
import { paymentsRoutes } from './modules/payments/routes.ts';
import { createPaymentsModule, type PaymentsModule } from './modules/payments/module.ts';
import { voiceRoutes } from './modules/voice/routes.ts';
import { createVoiceModule, type VoiceModule } from './modules/voice/module.ts';
import { type CallsModule, createCallsModule } from './modules/calls/module.ts';
import { publicRoutes } from './modules/public/routes.ts';
import { demoRoutes } from './modules/demo/routes.ts';
import { createSchedulesModule, type SchedulesModule } from './modules/schedules/module.ts';
import { schedulesRoutes } from './modules/schedules/routes.ts';
import { campaignsRoutes } from './modules/campaigns/routes.ts';
import { type CampaignsModule, createCampaignsModule } from './modules/campaigns/module.ts';
import { widgetsRoutes } from './modules/widgets/routes.ts';
import { brandingRoutes } from './modules/branding/routes.ts';
import { createDashboard } from './modules/dashboard/routes.ts';
import { registerDeliveryBacklogGauge } from './modules/housekeeping/backlog-gauge.ts';

export interface AppInputs {
  config: Config;
  database: DatabaseHandle;
  clock: Clock;
  jwtSecret: string;
  redis?: Redis;
  mailer?: Mailer;
  /** A pino logger; by default one at config.logLevel. */
  logger?: FastifyBaseLogger;
  /** Adapters replacing the configured ones (tests, benchmarks). */
  providers?: ProviderOverrides;
  /** Called on the bare app before any route is added (observers such as the tests' operation recorder). */
  instrument?: (app: FastifyInstance) => void;
  /** The process's start-up clock (src/server.ts): building the app ends its phases `platform`, `plugins`, `routes`. */
  phases?: StartupPhases;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

// Request ids (req_ + 20 hex): a random prefix per process (48 bits) and a counter (32 bits), unique
// across instances without a randomBytes call per request; a new prefix when the counter wraps.
let requestIdPrefix = `req_${randomBytes(6).toString('hex')}`;
let requestCount = 0;
function nextRequestId(): string {
  if (requestCount === 0xffffffff) {
    requestIdPrefix = `req_${randomBytes(6).toString('hex')}`;
    requestCount = 0;
  }
  return `${requestIdPrefix}${(++requestCount).toString(16).padStart(8, '0')}`;
}

/** One log line per request, when it completes (with the request's fields), instead of Fastify's two. */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** TRUST_PROXY as a hop count: trust that many proxies nearest to this server. */
const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

/** Builds the whole HTTP app from its inputs. Does not listen and starts no worker. */
export async function buildApp(
  inputs: AppInputs,
): Promise<{ app: FastifyInstance; platform: Platform; calls: CallsModule; payments: PaymentsModule; voice: VoiceModule; schedules: SchedulesModule; campaigns: CampaignsModule }> {
  const { config } = inputs;
  const app = Fastify({
    // Every logger gets the server's serializers: redacted URLs, errors without query values or secrets.
    loggerInstance: inputs.logger ? withLogSerializers(inputs.logger) : createLogger({ level: config.logLevel, format: config.logFormat }),
    bodyLimit: 1024 * 1024,
    // A plugin's start (migrations, the demo workspace, swagger-ui's files) may take well over
    // Fastify's default 10 s on a loaded machine: a slow start is not a hung plugin.
    pluginTimeout: 120_000,
    // Response serialisers compiled on each route's first response, not all at start-up.
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } },
    // The router's own refusals (bad percent-encoding, over-long parameters) as problem+json.
    frameworkErrors,
    clientErrorHandler: clientErrorHandlerFor(config.publicBaseUrl),
    // Behind a reverse proxy, X-Forwarded-For names the client (per-IP limits, audit ip) only when trusted.
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    requestIdHeader: false,
    logController: new OneLinePerRequest(),
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : nextRequestId();
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const telemetry = await createTelemetry(config.telemetry, { onError: (err) => app.log.warn({ err }, 'tracing: spans could not be exported') });
  // The composition: the platform, and the adapters built on its CPU pool and database.
  const clocks = { real: () => createScaledClock(1), sandbox: (speed: number) => createVirtualClock({ speed }) };
  const platform = createPlatform({ ...inputs, logger: app.log, telemetry, createProviders: (base) => createProviders({ ...base, clocks }, inputs.providers) });
  await platform.gate.ready();
  inputs.phases?.end('platform');
  inputs.instrument?.(app);
  if (telemetry.tracer) registerHttpTracing(app, telemetry.tracer, config.telemetry.readsRatio);

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  registerValidation(app);
  const { stripe } = config;
  const dashboard = createDashboard({
    paymentsProvider: config.paymentsProvider,
    stripe: config.paymentsProvider === 'stripe' && stripe.publishableKey ? { publishableKey: stripe.publishableKey, jsUrl: stripe.jsUrl, apiBaseUrl: stripe.apiBaseUrl } : undefined,
  });
  registerErrorHandling(app, { publicBaseUrl: config.publicBaseUrl, notFoundFallback: dashboard.pageFallback });
  registerErrorDocs(app);
  registerInputGuard(app);
  enforceRouteConventions(app);
  await registerOpenApi(app, { publicBaseUrl: config.publicBaseUrl, extras: webhooksOpenApi() });
  if (config.corsOrigins.length > 0) {
    await app.register(cors, { origin: config.corsOrigins, exposedHeaders: ['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'Retry-After', 'Idempotent-Replayed', 'WWW-Authenticate'] });
  }
  registerDeliveryBacklogGauge(platform.metrics.registry, platform);
  registerMetrics(app, platform.metrics, config.metricsToken);
  // WebSocket routes (media streams); a frame larger than any protocol message here closes the socket.
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  registerAuthentication(app, platform);
  registerIdempotency(app, platform);
  registerAuditTrail(app, platform.audit);
  inputs.phases?.end('plugins');

  // The modules, one plugin each; each builds its own service from the platform.
  await app.register(healthRoutes(platform));
  await app.register(authRoutes(platform));
  await app.register(workspacesRoutes(platform));
  await app.register(invitationsRoutes(platform));
  await app.register(apiKeysRoutes(platform));
  await app.register(auditLogRoutes(platform));
  await app.register(webhooksRoutes(platform));
  await app.register(agentsRoutes(platform));
  await app.register(catalogRoutes(platform));
  await app.register(knowledgeBaseRoutes(platform, { detachFromAgents: createAgentsRepo().detachKnowledgeBase }));
  const calls = createCallsModule(platform, { linkSecret: inputs.jwtSecret });
  await app.register(callsRoutes(calls));
  await app.register(phoneNumbersRoutes(platform));
  await app.register(dncRoutes(platform));
  await app.register(analyticsRoutes(platform));
  await app.register(telephonyRoutes(platform, calls));
  const payments = createPaymentsModule(platform);
  await app.register(walletRoutes(platform));
  await app.register(paymentsRoutes(payments.service));
  const voice = createVoiceModule(platform, calls);
  await app.register(voiceRoutes(platform, voice.service));
  await app.register(publicRoutes(platform));
  await app.register(demoRoutes(platform, calls));
  const schedules = createSchedulesModule(platform, calls);
  await app.register(schedulesRoutes(schedules));

  const campaigns = createCampaignsModule(platform, calls);
  await app.register(campaignsRoutes(platform, campaigns));
  await app.register(widgetsRoutes(platform, voice.service));
  await app.register(brandingRoutes(platform));
  // The dashboard: `/`, its assets, and its client routes for browser navigations (API paths keep their 404).
  await app.register(dashboard.routes);
  inputs.phases?.end('routes');

  app.addHook('onClose', async () => {
    await schedules.worker.stop();
    await campaigns.dialer.stop();
    await calls.worker.stop();
    await calls.postCall.stop();
    await payments.worker.stop();
    await voice.worker.stop();
    await voice.service.close();
    await platform.keyUsage.flush();
    await platform.gate.close();
    await platform.outbound.close();
    await platform.cpu.close();
    await telemetry.shutdown();
  });
  return { app, platform, calls, payments, voice, schedules, campaigns };
}
