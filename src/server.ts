// Process entry: config → database → app → listen → jobs (ROLE=all|worker); graceful shutdown on signals.
import path from 'node:path';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { resolveJwtSecret } from './platform/auth/jwt.ts';
import { systemClock } from './platform/clock.ts';
import { migrateToLatest, openDatabase } from './platform/db/database.ts';
import { usablePgliteTemplate } from './platform/db/pglite-template.ts';
import { startJobs, stopJobs } from './platform/jobs/job.ts';
import { describeMediaHealth } from './providers/health.ts';
import { createStartupPhases, STARTUP_LOG_MESSAGE } from './platform/startup-phases.ts';

async function main() {
  // Every module above is loaded by now: that is the first phase (Node's own start included).
  const phases = createStartupPhases();
  phases.end('modules');
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`configuration error: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }

  // A new DATA_DIR starts from the migrated template made at install time, when there is one.
  const pgliteTemplate = config.databaseUrl ? undefined : usablePgliteTemplate();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'pglite'), pgliteTemplate });
  phases.end('database_open');
  await migrateToLatest(database);
  phases.end('migrations');
  // ioredis is loaded only when Redis is configured.
  const redis = config.redisUrl ? new (await import('ioredis')).Redis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: false }) : undefined;
  // The rate limiter reports an unreachable Redis once (and its return); ioredis reconnects by itself.
  redis?.on('error', () => undefined);
  const jwtSecret = await resolveJwtSecret(config.auth.jwtSecret, config.dataDir);
  phases.end('jwt_secret');
  // `jobs`: every module's background jobs, in start order (src/app.ts lists them).
  const { app, platform, modules, jobs } = await buildApp({ config, database, clock: systemClock, jwtSecret, redis, phases });

  // Explicit server timeouts: a slow client cannot hold a socket forever.
  app.server.requestTimeout = 60_000;
  app.server.headersTimeout = 30_000;
  app.server.keepAliveTimeout = 72_000;

  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err) app.log.error({ err }, 'closing after an error');
    else app.log.info({ signal }, 'shutting down');
    // Stop claiming first (last started first); deliveries in flight are recorded before the
    // outbound client closes (app.close).
    await stopJobs(jobs);
    await app.close();
    redis?.disconnect();
    await database.close();
    // The log is written asynchronously: what is buffered reaches stdout before the process exits
    // (a crash's reason above all).
    const logger = app.log as typeof app.log & { flush?: (done: () => void) => void };
    await new Promise<void>((resolve) => (logger.flush ? logger.flush(() => resolve()) : resolve()));
  });

  // The background jobs claim and run rows; no request waits for them, so they start once the
  // server listens (their first claims would otherwise queue ahead of the first requests on PGlite).
  // ROLE=api runs none of them: another instance (ROLE=worker|all) does.
  const startWorkers = async () => {
    if (config.role !== 'api') await startJobs(jobs);
  };
  // Route schemas compiled, plugins loaded: every route answers from here on.
  await app.ready();
  phases.end('ready');
  if (config.role !== 'worker') {
    await app.listen({ port: config.port, host: config.host });
    // The moment the listen phase ended, not a later reading: the phases up to here add up to it.
    const listeningMs = phases.end('listen');
    // The OpenAPI document is built once, on its first request or here, whichever comes first.
    app.swagger();
    phases.end('openapi');
    await startWorkers();
    phases.end('workers');
    // The media writer's thread loads now, not while the first caller waits for the greeting.
    modules.voice.service.prepareMedia();
    phases.end('media_writer');
    app.log.info(`docs at ${config.publicBaseUrl}/docs, schema at ${config.publicBaseUrl}/openapi.json (database: ${database.kind})`);
    // Which engines are real and whether they answer (the espeak-ng probe among them); logged once
    // the checks are back, never blocking start-up.
    void phases
      .beside('media_probe', platform.providers.mediaHealth())
      .then((health) => app.log.info({ media: health }, `media: ${describeMediaHealth(health)}`))
      .catch((err) => app.log.warn({ err }, 'media health check failed'))
      .finally(() => app.log.debug({ phases: phases.report(), phases_cpu: phases.cpu(), listening_ms: listeningMs, pglite_template: database.fromTemplate ?? false }, STARTUP_LOG_MESSAGE));
  } else {
    await startWorkers();
    phases.end('workers');
    app.log.info('worker role: HTTP API not served');
    app.log.debug({ phases: phases.report(), phases_cpu: phases.cpu(), pglite_template: database.fromTemplate ?? false }, STARTUP_LOG_MESSAGE);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
