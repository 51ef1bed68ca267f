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

/** What the dashboard may load: its own files and the API on this origin, no inline script. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  `style-src 'self' ${REACT_ARIA_STYLES.join(' ')}`,
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const NOT_THE_APP = /^\/(v1|docs|openapi\.json|metrics|assets)(\/|$)/;
const IMMUTABLE = 'public, max-age=31536000, immutable';

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset, cacheControl: string) {
  reply.header('Cache-Control', cacheControl).header('ETag', asset.etag).header('Vary', 'Accept-Encoding').header('X-Content-Type-Options', 'nosniff');
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  reply.type(asset.type);
  if (asset.gzip && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('Content-Encoding', 'gzip').send(asset.gzip);
  return reply.send(asset.body);
}

function sendIndex(request: FastifyRequest, reply: FastifyReply, files: DashboardFiles) {
  reply.header('Content-Security-Policy', DASHBOARD_CSP).header('Referrer-Policy', 'no-referrer').header('X-Frame-Options', 'DENY');
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

/** The dashboard's routes (`/`, `/assets/*`) and the not-found fallback that serves its client routes. */
export function createDashboard(options: { dist?: string } = {}) {
  let files: DashboardFiles | undefined;
  const load = () => {
    files ??= loadDashboard(options.dist ?? DASHBOARD_DIST);
    return files;
  };
  return {
    routes: dashboardRoutes(load),
    /** Answers a browser navigation to a client route with the app; null for anything else (the platform's 404). */
    pageFallback(request: FastifyRequest, reply: FastifyReply): FastifyReply | null {
      const wantsPage = request.method === 'GET' && String(request.headers.accept ?? '').includes('text/html');
      if (!wantsPage || NOT_THE_APP.test(request.url.split('?')[0])) return null;
      return sendIndex(request, reply, load());
    },
  };
}

function dashboardRoutes(load: () => DashboardFiles) {
  return async (app: FastifyInstance) => {
    const hidden = { schema: { hide: true } };
    app.get('/', hidden, (request, reply) => sendIndex(request, reply, load()));
    app.get<{ Params: { '*': string } }>('/assets/*', hidden, (request, reply) => {
      const asset = load().assets.get(request.params['*']);
      return asset ? send(request, reply, asset, IMMUTABLE) : reply.callNotFound();
    });
  };
}
