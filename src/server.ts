// Process entry: config → database → app → (worker) → listen; graceful shutdown on signals.
import path from 'node:path';
import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { resolveJwtSecret } from './platform/auth/jwt.ts';
import { systemClock } from './platform/clock.ts';
import { migrateToLatest, openDatabase } from './platform/db/database.ts';
import { createWebhookWorker } from './modules/webhooks/worker.ts';
import { createHousekeepingWorker } from './modules/housekeeping/worker.ts';
import { checkMediaHealth, describeMediaHealth } from './providers/health.ts';

async function main() {
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

  const database = await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'pglite') });
  await migrateToLatest(database);
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: false }) : undefined;
  // The rate limiter reports an unreachable Redis once (and its return); ioredis reconnects by itself.
  redis?.on('error', () => undefined);
  const jwtSecret = await resolveJwtSecret(config.auth.jwtSecret, config.dataDir);
  const { app, platform, calls, payments, voice, schedules, campaigns } = await buildApp({ config, database, clock: systemClock, jwtSecret, redis });
  const webhookWorker =
    config.role === 'api'
      ? null
      : createWebhookWorker({
          database,
          clock: systemClock,
          webhooks: config.webhooks,
          outbound: platform.outbound,
          logger: app.log,
          wake: platform.events.wake,
          tracer: platform.telemetry.tracer,
        });
  const housekeeping = config.role === 'api' ? null : createHousekeepingWorker({ database, clock: systemClock, logger: app.log, intervalMs: 10 * 60_000 });

  // Explicit server timeouts: a slow client cannot hold a socket forever.
  app.server.requestTimeout = 60_000;
  app.server.headersTimeout = 30_000;
  app.server.keepAliveTimeout = 72_000;

  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err) app.log.error({ err }, 'closing after an error');
    else app.log.info({ signal }, 'shutting down');
    // Stop claiming first; deliveries in flight are recorded before the outbound client closes.
    await webhookWorker?.stop();
    await housekeeping?.stop();
    await schedules.worker.stop();
    await campaigns.dialer.stop();
    await calls.worker.stop();
    await calls.postCall.stop();
    await payments.worker.stop();
    await voice.worker.stop();
    await app.close();
    redis?.disconnect();
    await database.close();
    // The log is written asynchronously: what is buffered reaches stdout before the process exits
    // (a crash's reason above all).
    const logger = app.log as typeof app.log & { flush?: (done: () => void) => void };
    await new Promise<void>((resolve) => (logger.flush ? logger.flush(() => resolve()) : resolve()));
  });

  await webhookWorker?.start();
  housekeeping?.start();
  // The dialer: queued calls (and calls whose process died) are picked up by ROLE=all|worker.
  if (config.role !== 'api') await calls.worker.start();
  // After the call: recordings, extraction, call.ended (calls ended anywhere, or left by a dead worker).
  if (config.role !== 'api') await calls.postCall.start();
  // The campaign dialer: queues due contacts' calls for the dialer above.
  if (config.role !== 'api') await campaigns.dialer.start();
  // Auto-recharge charges wallets that crossed below their threshold.
  if (config.role !== 'api') payments.worker.start();
  // Voice sessions nobody joined end when their token expires.
  if (config.role !== 'api') voice.worker.start();
  // Scheduled calls fire at their time (those due while no worker ran fire now, late).
  if (config.role !== 'api') await schedules.worker.start();
  if (config.role !== 'worker') {
    await app.listen({ port: config.port, host: config.host });
    // The media writer's thread loads now, not while the first caller waits for the greeting.
    voice.service.prepareMedia();
    app.log.info(`docs at ${config.publicBaseUrl}/docs, schema at ${config.publicBaseUrl}/openapi.json (database: ${database.kind})`);
    // Which engines are real and whether they answer; logged once the checks are back, never blocking start-up.
    void checkMediaHealth({ providers: platform.providers, config })
      .then((health) => app.log.info({ media: health }, `media: ${describeMediaHealth(health)}`))
      .catch((err) => app.log.warn({ err }, 'media health check failed'));
  } else {
    await app.ready();
    app.log.info('worker role: HTTP API not served');
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
