import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { createAuditWriter } from './audit.ts';
import { createApiKeyUsageRecorder } from './auth/api-key-usage.ts';
import { createGate } from './auth/gate.ts';
import { createJwtSigner } from './auth/jwt.ts';
import type { Clock } from './clock.ts';
import { type CpuPool, createCpuPool } from './cpu-pool.ts';
import type { DatabaseHandle } from './db/database.ts';
import type { Database } from './db/schema.ts';
import { createMailer, type Mailer } from './mailer.ts';
import { createOutboundClient } from './outbound/ssrf-guard.ts';
import { createEventEmitter } from './outbox/emitter.ts';
import { createTenantEndpointCache } from './outbox/tenant-endpoint-cache.ts';
import { API_VERSION } from './http/openapi.ts';
import { createMetrics } from './metrics.ts';
import { createRateLimiter } from './rate-limit.ts';
import { type Telemetry, TRACING_OFF } from './telemetry/telemetry.ts';
import type { Providers } from '../ports/providers.ts';

// The cross-cutting dependencies every module receives. Built once per app from its inputs;
// nothing here is a module-level singleton.

export interface PlatformInputs {
  config: Config;
  database: DatabaseHandle;
  clock: Clock;
  jwtSecret: string;
  redis?: Redis;
  logger: FastifyBaseLogger;
  mailer?: Mailer;
  /**
   * Builds the deployment's adapters on the platform's CPU pool and database (given by the
   * composition root, src/app.ts: the platform names no adapter).
   */
  createProviders(base: { config: Config; clock: Clock; cpu: CpuPool; db: Database }): Providers;
  /** OpenTelemetry tracing (createTelemetry); off by default. */
  telemetry?: Telemetry;
}

export function createPlatform(inputs: PlatformInputs) {
  const { config, database, clock, logger } = inputs;
  const db = database.db;
  const audit = createAuditWriter({ db, clock });
  const cpu = createCpuPool();
  const gate = createGate({ database, clock, logger, ttlSeconds: config.auth.cacheTtlSeconds });
  // On the gate's bus: the same invalidations reach it on every instance, it serves only while the
  // gate's may, and the gate's TTL is its safety net.
  const tenantEndpoints = gate.carry(createTenantEndpointCache({ ttlSeconds: config.auth.cacheTtlSeconds, clock, trusted: () => gate.serving }));
  return {
    config,
    database,
    db,
    clock,
    logger,
    redis: inputs.redis,
    audit,
    /** Tracing: `telemetry.tracer` is undefined when it is off (no span is started anywhere then). */
    telemetry: inputs.telemetry ?? TRACING_OFF,
    /** The Prometheus registry and the platform's instruments (served at /metrics). */
    metrics: createMetrics(),
    /** The request gate's verdict cache and its invalidation (publish after a change commits). */
    gate,
    jwt: createJwtSigner(inputs.jwtSecret, config.auth.accessTokenTtlSeconds),
    mailer: inputs.mailer ?? createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir }),
    keyUsage: createApiKeyUsageRecorder({ db, clock, audit, onError: (err) => logger.warn({ err }, 'usage bookkeeping failed') }),
    /** HTTP client for user-supplied URLs, behind the SSRF guard. */
    outbound: createOutboundClient({ allowPrivate: config.allowPrivateUrls, userAgent: `VoiceAgentPlatform/${API_VERSION}` }),
    /** The events engine's write side: `events.emit(tx, …)` inside the causing transaction. */
    events: createEventEmitter({ clock, webhooks: config.webhooks, notifyInTransaction: database.kind === 'postgres', tenantEndpoints }),
    /** The tenant webhook endpoints events.emitAlone routes by, kept in process (cleared through gate.publish). */
    tenantEndpoints,
    /** Worker threads for CPU-heavy work (speech, MP3, document extraction, chunking); closed with the app. */
    cpu,
    /** The deployment's adapters (LLM, TTS, blobs; telephony and speech with the call runtime). */
    providers: inputs.createProviders({ config, clock, cpu, db }),
    rateLimiter: createRateLimiter(
      { principalPerMin: config.rateLimit.userPerMin, ipPerMin: config.rateLimit.ipPerMin, demoPerMin: config.rateLimit.demoPerMin },
      {
        redis: inputs.redis,
        onRedisState: (state, error) =>
          state === 'lost'
            ? inputs.logger.warn({ err: error }, 'rate limits: Redis is unreachable; each instance counts on its own until it is back')
            : inputs.logger.info('rate limits: Redis is back; limits are shared again'),
      },
    ),
  };
}

export type Platform = ReturnType<typeof createPlatform>;
