import type { FastifyReply, FastifyRequest } from 'fastify';

// Who may use a widget from a browser: its allowed_origins (empty: any page), a request without
// Origin (server-side use, a plain <script> load), and the platform's own pages (the preview,
// same origin as the request). Allowed cross-origin requests get CORS headers naming that origin;
// refused ones get none. The app's global CORS (CORS_ORIGINS, @fastify/cors) is off on these
// routes (`config.cors: false`): the widget's own list decides.

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` turns @fastify/cors off for the route (its documented per-route switch). */
    cors?: false;
  }
}

/** `scheme://host[:port]` of an http(s) origin, lower-cased, default port dropped; undefined when not an origin. */
export function normaliseOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return undefined;
  return url.origin;
}

/** Whether a request from `origin` (the Origin header) may use a widget allowing `allowed`. */
export function originAllowed(allowed: string[], origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined || allowed.length === 0) return true;
  const normalised = normaliseOrigin(origin);
  if (!normalised) return false;
  if (allowed.includes(normalised)) return true;
  // The platform's own pages (the preview) are same-origin with the API.
  return host !== undefined && new URL(normalised).host === host.toLowerCase();
}

const EXPOSED = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Retry-After, X-Request-Id, ETag';

/** CORS headers of an allowed cross-origin request (none without Origin). */
export function answerCors(request: FastifyRequest, reply: FastifyReply) {
  reply.header('Vary', 'Origin');
  const origin = request.headers.origin;
  if (!origin) return;
  reply.header('Access-Control-Allow-Origin', origin).header('Access-Control-Expose-Headers', EXPOSED);
  if (request.method === 'OPTIONS') {
    reply
      .header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS')
      .header('Access-Control-Allow-Headers', 'Content-Type, Idempotency-Key, X-Request-Id')
      .header('Access-Control-Max-Age', '600');
  }
}
