import type { Platform } from '../../platform/platform.ts';
import type { CallsModule } from '../calls/module.ts';
import { telephonyRoutes } from './routes.ts';
import { createTelephonyService } from './service.ts';

// The telephony module: every registered carrier's webhooks and media streams; those of the
// deployment's carrier (TELEPHONY_PROVIDER, when it has webhooks: the sandbox has none) answer
// calls through the calls module, the others answer that they are not configured.

export function createTelephonyModule(platform: Platform, deps: { calls: CallsModule }) {
  const { webhooks } = platform.providers.telephony;
  const running = webhooks ? { webhooks, service: createTelephonyService(platform, deps.calls, webhooks) } : null;
  return { routes: telephonyRoutes({ carriers: platform.providers.carrierWebhooks, running, logger: platform.logger }), service: running?.service };
}
