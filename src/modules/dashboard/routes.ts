import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Asset, DASHBOARD_DIST, type DashboardFiles, loadDashboard } from './assets.ts';

// The dashboard (web/dashboard, DESIGN part 9) on the API's own origin: `/` and any client route
// (`/agents/…`, `/calls/…`) answer its index.html, `/assets/…` its hashed files. A browser
// navigation (Accept: text/html) to an address no route has gets the app, which shows its own
// "no page here"; everything else (the API under /v1, /docs, /openapi.json, /metrics, a missing
// asset, a non-HTML request) keeps the platform's problem+json 404. The client routes are served
// from the platform's not-found handler (`pageFallback`), not a `/*` route: a catch-all route
// would also take what the router refuses, such as an over-long id (414 uri_too_long).

// React Aria adds two fixed <style> elements of its own (touch-action on pressable elements, and
// overscroll-behavior while a modal is open): allowed by their hashes, nothing else inline. The
// browser test fails on any CSP violation, so a change of those texts in an upgrade shows there.
const REACT_ARIA_STYLES = ["'sha256-38RhXrc7EdReTKsOm23ZPOCUgniTUUcjky8QOOrQx6o='", "'sha256-gYiS/BvZvRcK27JIXTuwhZ3hs2+VJ1X+2gUlE+farlg='"];

/** Stripe mode with a publishable key: the billing page confirms top-ups with Stripe.js. */
export interface DashboardStripe {
  publishableKey: string;
  /** STRIPE_JS_URL: the script's origin may run scripts and frames (the Payment Element, 3-D Secure). */
  jsUrl: string;
  /** STRIPE_API_BASE_URL (default Stripe's): Stripe.js confirms the payment there, from the page. */
  apiBaseUrl?: string;
}

/** What the dashboard may load: its own files and the API on this origin, no inline script; Stripe.js in Stripe mode. */
export function dashboardCsp(stripe?: DashboardStripe): string {
  const js = stripe ? new URL(stripe.jsUrl).origin : undefined;
  // Stripe's own list (docs.stripe.com/security/guide#content-security-policy) for its real hosts.
  const stripeHosted = js === 'https://js.stripe.com';
  const scripts = js ? [js, ...(stripeHosted ? ['https://*.js.stripe.com'] : [])] : [];
  const frames = js ? [js, ...(stripeHosted ? ['https://*.js.stripe.com', 'https://hooks.stripe.com'] : [])] : [];
  const api = stripe ? new URL(stripe.apiBaseUrl ?? 'https://api.stripe.com').origin : undefined;
  return [
    "default-src 'self'",
    ["script-src 'self'", ...scripts].join(' '),
    `style-src 'self' ${REACT_ARIA_STYLES.join(' ')}`,
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    ["connect-src 'self'", ...(api ? [api] : [])].join(' '),
    ...(frames.length > 0 ? [`frame-src ${frames.join(' ')}`] : []),
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The CSP without Stripe.js (sandbox payments, or Stripe without a publishable key). */
export const DASHBOARD_CSP = dashboardCsp();

const NOT_THE_APP = /^\/(v1|docs|openapi\.json|metrics|assets)(\/|$)/;
const IMMUTABLE = 'public, max-age=31536000, immutable';

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset, cacheControl: string) {
  reply.header('Cache-Control', cacheControl).header('ETag', asset.etag).header('Vary', 'Accept-Encoding').header('X-Content-Type-Options', 'nosniff');
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  reply.type(asset.type);
  if (asset.gzip && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('Content-Encoding', 'gzip').send(asset.gzip);
  return reply.send(asset.body);
}

function sendIndex(request: FastifyRequest, reply: FastifyReply, files: DashboardFiles, csp: string) {
  reply.header('Content-Security-Policy', csp).header('Referrer-Policy', 'no-referrer').header('X-Frame-Options', 'DENY');
  if (!files.index) {
    return reply
      .code(503)
      .header('Cache-Control', 'no-store')
      .type('text/html; charset=utf-8')
      .send('<!doctype html><title>Dashboard not built</title><p>The dashboard is not built: run <code>npm run dashboard:build</code>. The API is at <a href="/docs">/docs</a>.</p>');
  }
  // no-cache: revalidated every time (ETag), so a new deployment's index names its new assets.
  return send(request, reply, files.index, 'no-cache');
}

/** What the dashboard reads at run time (GET /dashboard-config.json): how the billing page takes payments. */
function runtimeConfig(options: DashboardOptions) {
  return {
    payments_provider: options.paymentsProvider ?? 'sandbox',
    stripe: options.stripe ? { publishable_key: options.stripe.publishableKey, js_url: options.stripe.jsUrl } : null,
  };
}

export interface DashboardOptions {
  dist?: string;
  paymentsProvider?: 'sandbox' | 'stripe';
  stripe?: DashboardStripe;
}

/** The dashboard's routes (`/`, `/assets/*`, its run-time config) and the not-found fallback that serves its client routes. */
export function createDashboard(options: DashboardOptions = {}) {
  const csp = dashboardCsp(options.stripe);
  let files: DashboardFiles | undefined;
  const load = () => {
    files ??= loadDashboard(options.dist ?? DASHBOARD_DIST);
    return files;
  };
  return {
    routes: dashboardRoutes(load, csp, runtimeConfig(options)),
    /** Answers a browser navigation to a client route with the app; null for anything else (the platform's 404). */
    pageFallback(request: FastifyRequest, reply: FastifyReply): FastifyReply | null {
      const wantsPage = request.method === 'GET' && String(request.headers.accept ?? '').includes('text/html');
      if (!wantsPage || NOT_THE_APP.test(request.url.split('?')[0])) return null;
      return sendIndex(request, reply, load(), csp);
    },
  };
}

function dashboardRoutes(load: () => DashboardFiles, csp: string, config: ReturnType<typeof runtimeConfig>) {
  return async (app: FastifyInstance) => {
    const hidden = { schema: { hide: true } };
    app.get('/', hidden, (request, reply) => sendIndex(request, reply, load(), csp));
    app.get('/dashboard-config.json', hidden, (_request, reply) => reply.header('Cache-Control', 'no-cache').send(config));
    app.get<{ Params: { '*': string } }>('/assets/*', hidden, (request, reply) => {
      const asset = load().assets.get(request.params['*']);
      return asset ? send(request, reply, asset, IMMUTABLE) : reply.callNotFound();
    });
  };
}
