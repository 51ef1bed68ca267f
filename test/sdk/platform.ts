import { type TestApp, buildTestApp } from '../support/app.ts';
import { closeAtEnd } from '../support/cleanup.ts';
import { freePort } from '../support/ports.ts';
import { createWebhookWorker } from '../../src/modules/webhooks/worker.ts';

// The real platform for the SDKs' tests: the app on this file's test database, listening on
// 127.0.0.1 with its workers running (the dialer, after-the-call jobs, webhook deliveries), as
// `npm start` runs it, with 3-second access tokens so that a flow meets their expiry: short enough to wait out, and long
// enough that the half left when an SDK refreshes ahead of a streamed upload outlasts a loaded machine's delay.

export interface RunningPlatform {
  t: TestApp;
  baseURL: string;
}

export async function startPlatform(env: Record<string, string> = {}): Promise<RunningPlatform> {
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  const t = await buildTestApp({ env: { ACCESS_TOKEN_TTL_SECONDS: '3', SANDBOX_SPEED: 'max', PUBLIC_BASE_URL: baseURL, ...env } });
  const p = t.platform;
  const webhooks = createWebhookWorker({ database: p.database, clock: p.clock, webhooks: p.config.webhooks, outbound: p.outbound, logger: p.logger, wake: p.events.wake });
  await webhooks.start();
  await t.modules.calls.worker.start();
  await t.modules.calls.postCall.start();
  // Closers run last registered first: the workers stop before the app (registered earlier) closes.
  closeAtEnd(async () => {
    await webhooks.stop();
    await t.modules.calls.worker.stop();
    await t.modules.calls.postCall.stop();
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, baseURL };
}
