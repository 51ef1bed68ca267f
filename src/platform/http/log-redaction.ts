import type { FastifyRequest } from 'fastify';

// Request URLs go to the logs; some carry secrets: invitation tokens in the path (the API's, and the
// dashboard page a mailed invitation links to, `/invitations/<token>`), and the
// `token` / `signature` query parameters of media streams and signed links. They are logged redacted.

const SECRET_PATH = /^(\/(?:v1\/)?invitations\/)[^/?]+/;
const SECRET_QUERY = /([?&](?:token|signature|access_token)=)[^&#]*/gi;

/** Longest URL written whole; a hostile request's path or query can be megabytes long. */
export const MAX_LOGGED_URL = 2048;

export function redactUrl(url: string): string {
  // Most URLs hold nothing to redact: skip the regular expressions (this runs on every request's log line).
  if (url.length <= MAX_LOGGED_URL && !url.includes('=') && !url.startsWith('/v1/invitations/') && !url.startsWith('/invitations/')) return url;
  const redacted = url.replace(SECRET_PATH, '$1[redacted]').replace(SECRET_QUERY, '$1[redacted]');
  return redacted.length <= MAX_LOGGED_URL ? redacted : `${redacted.slice(0, MAX_LOGGED_URL)}…[${redacted.length} characters]`;
}

/** pino serializer for Fastify's `req` log field. */
export function serializeRequest(request: FastifyRequest) {
  return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
}
