import type { Platform } from '../../platform/platform.ts';
import { createDashboard } from './routes.ts';

// The dashboard module: `/`, its assets and run-time config (routes), and the not-found fallback
// that answers a browser navigation to one of its client routes with the app (pageFallback,
// handed to the error handler by src/app.ts). Its routes are registered after every other
// module's; no service, no job.

export function createDashboardModule(platform: Platform) {
  const { paymentsProvider, stripe } = platform.config;
  const dashboard = createDashboard({
    paymentsProvider,
    // Stripe mode with a publishable key: the billing page confirms top-ups with Stripe.js.
    stripe: paymentsProvider === 'stripe' && stripe.publishableKey ? { publishableKey: stripe.publishableKey, jsUrl: stripe.jsUrl, apiBaseUrl: stripe.apiBaseUrl } : undefined,
  });
  return { routes: dashboard.routes, pageFallback: dashboard.pageFallback };
}
