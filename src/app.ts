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
import { type Job, stopJobs } from './platform/jobs/job.ts';
import { createHealthModule } from './modules/health/module.ts';
import { createAuthModule } from './modules/auth/module.ts';
import { createWorkspacesModule } from './modules/workspaces/module.ts';
import { createInvitationsModule } from './modules/invitations/module.ts';
import { createApiKeysModule } from './modules/api-keys/module.ts';
import { createAuditLogModule } from './modules/audit-log/module.ts';
import { createWebhooksModule } from './modules/webhooks/module.ts';
import { webhooksOpenApi } from './modules/webhooks/openapi.ts';
import { createAgentsModule } from './modules/agents/module.ts';
import { createAgentsRepo } from './modules/agents/repo.ts';
import { createCatalogModule } from './modules/catalog/module.ts';
import { createKnowledgeBaseModule } from './modules/knowledge-base/module.ts';
import { createCallsModule } from './modules/calls/module.ts';
import { createPhoneNumbersModule } from './modules/phone-numbers/module.ts';
import { createDncModule } from './modules/dnc/module.ts';
import { createAnalyticsModule } from './modules/analytics/module.ts';
import { createTelephonyModule } from './modules/telephony/module.ts';
import { createWalletModule } from './modules/wallet/module.ts';
import { createPaymentsModule } from './modules/payments/module.ts';
import { createVoiceModule } from './modules/voice/module.ts';
import { createPublicModule } from './modules/public/module.ts';
import { createDemoModule } from './modules/demo/module.ts';
import { createSchedulesModule } from './modules/schedules/module.ts';
import { createCampaignsModule } from './modules/campaigns/module.ts';
import { createWidgetsModule } from './modules/widgets/module.ts';
import { createBrandingModule } from './modules/branding/module.ts';
import { createHousekeepingModule } from './modules/housekeeping/module.ts';
import { createDashboardModule } from './modules/dashboard/module.ts';
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

/**
 * The modules, each `create<Name>Module(platform, deps) → { routes, service?, jobs? }`, built here
 * in dependency order: a module gets what it uses of another as an explicit dependency. The
 * returned object lists them in the order their routes are registered (the order of the paths in
 * openapi.json).
 */
function createModules(platform: Platform, jwtSecret: string) {
  const webhooks = createWebhooksModule(platform);
  // Agents use knowledge bases; deleting a base detaches it from the agents, in the deleting
  // transaction, through the owner's repo function (agents depend on knowledge bases, not back).
  const knowledgeBase = createKnowledgeBaseModule(platform, { detachFromAgents: createAgentsRepo().detachKnowledgeBase });
  // The app's one knowledge search (and its caches): the agents', the calls' and the demo's engines share it.
  const knowledge = knowledgeBase.search;
  const agents = createAgentsModule(platform, { knowledge });
  const calls = createCallsModule(platform, { linkSecret: jwtSecret, knowledge });
  const voice = createVoiceModule(platform, { calls });
  const branding = createBrandingModule(platform);
  return {
    health: createHealthModule(platform),
    auth: createAuthModule(platform),
    workspaces: createWorkspacesModule(platform),
    invitations: createInvitationsModule(platform),
    apiKeys: createApiKeysModule(platform),
    auditLog: createAuditLogModule(platform),
    webhooks,
    agents,
    catalog: createCatalogModule(platform),
    knowledgeBase,
    calls,
    phoneNumbers: createPhoneNumbersModule(platform, { hasLiveCallOn: calls.reads.hasLiveCallOn }),
    dnc: createDncModule(platform),
    // The calls table is the calls module's: analytics and usage read it through its figures.
    analytics: createAnalyticsModule(platform, { callFigures: calls.figures }),
    telephony: createTelephonyModule(platform, { calls }),
    wallet: createWalletModule(platform, { spendByAgent: calls.figures.spendByAgent }),
    payments: createPaymentsModule(platform),
    voice,
    public: createPublicModule(platform),
    demo: createDemoModule(platform, { calls: calls.service, knowledge }),
    schedules: createSchedulesModule(platform, { calls }),
    campaigns: createCampaignsModule(platform, { calls }),
    widgets: createWidgetsModule(platform, { agents: agents.service, branding: branding.service, voice: voice.service }),
    branding,
    housekeeping: createHousekeepingModule(platform),
    // Last: its routes after every API route (`/`, its assets); its page fallback is the error handler's.
    dashboard: createDashboardModule(platform),
  };
}

export type AppModules = ReturnType<typeof createModules>;

/**
 * Every module's background jobs in one list, in start order (src/server.ts starts it with
 * ROLE=all|worker once the server listens; shutdown and onClose stop it, last started first).
 */
function jobsOf(modules: AppModules): Job[] {
  return [
    // Webhook deliveries first: events already queued go out while the rest starts.
    ...modules.webhooks.jobs,
    ...modules.housekeeping.jobs,
    // The calls dialer and the post-call job before anything that queues calls for them.
    ...modules.calls.jobs,
    // The campaign dialer: queues due contacts' calls for the dialer above.
    ...modules.campaigns.jobs,
    // Auto-recharge charges wallets that crossed below their threshold.
    ...modules.payments.jobs,
    // Voice sessions nobody joined end when their token expires.
    ...modules.voice.jobs,
    // Scheduled calls fire at their time (those due while no worker ran fire now, late).
    ...modules.schedules.jobs,
  ];
}

/**
 * Builds the whole HTTP app from its inputs: the platform, the modules (`modules`, reachable for
 * tests and benches) and the list of their background jobs (`jobs`). Does not listen and starts no job.
 */
export async function buildApp(inputs: AppInputs): Promise<{ app: FastifyInstance; platform: Platform; modules: AppModules; jobs: Job[] }> {
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
  // The modules are built before any plugin (building one touches no route): the error handler
  // takes the dashboard module's page fallback. Their routes are registered below, after the plugins.
  const modules = createModules(platform, inputs.jwtSecret);
  const jobs = jobsOf(modules);
  inputs.instrument?.(app);
  if (telemetry.tracer) registerHttpTracing(app, telemetry.tracer, config.telemetry.readsRatio);

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  registerValidation(app);
  // A browser navigation to a route-less address may be one of the dashboard's client routes.
  registerErrorHandling(app, { publicBaseUrl: config.publicBaseUrl, notFoundFallback: modules.dashboard.pageFallback });
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

  // The modules' routes, one plugin each, in the modules' order (the housekeeping module has none;
  // the dashboard's, `/` and its assets, come last).
  for (const built of Object.values(modules)) if ('routes' in built) await app.register(built.routes);
  inputs.phases?.end('routes');

  app.addHook('onClose', async () => {
    await stopJobs(jobs);
    await modules.voice.service.close();
    await platform.keyUsage.flush();
    await platform.gate.close();
    await platform.outbound.close();
    await platform.cpu.close();
    await telemetry.shutdown();
  });
  return { app, platform, modules, jobs };
}
