import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from './clock.ts';
import type { Database } from './db/schema.ts';
import { AppError } from './errors.ts';
import { sha256Hex } from './secrets.ts';

// Idempotency-Key on any POST: the first request with a key runs and its response is stored;
// the same key with the same body within 24 h replays that response (Idempotent-Replayed: true);
// the same key with another body is 422 idempotency_key_reused; the same key still running is 409.
// Keys are scoped to the caller (principal, or IP on public routes). A 5xx frees the key again.

const TTL_MS = 24 * 3_600_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { scope: string; key: string };
  }
}

function callerScope(request: FastifyRequest): string {
  const principal = request.principal;
  const workspace = request.workspace?.workspaceId ?? '-';
  if (principal?.type === 'api_key') return `key:${principal.keyId}`;
  if (principal?.type === 'user') return `usr:${principal.userId}:${workspace}`;
  return `ip:${request.ip}`;
}

function requestHash(request: FastifyRequest): string {
  const route = request.routeOptions.url ?? request.url;
  const body = Buffer.isBuffer(request.body) ? request.body.toString('base64') : JSON.stringify(request.body ?? null);
  return sha256Hex(`${request.method} ${route} ${JSON.stringify(request.params ?? {})} ${body}`);
}

export function registerIdempotency(app: FastifyInstance, deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;

  app.addHook('preHandler', async (request, reply) => {
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined) return;
    const key = Array.isArray(header) ? header[0] : header;
    if (!KEY_PATTERN.test(key)) {
      throw new AppError('validation_failed', 'Idempotency-Key must be 1-255 visible ASCII characters', {
        errors: [{ path: 'headers.idempotency-key', message: 'must be 1-255 visible ASCII characters' }],
      });
    }
    const scope = callerScope(request);
    const hash = requestHash(request);
    const now = clock.now();
    // Drop an expired record of this key, then try to take it.
    await db.deleteFrom('idempotency_keys').where('scope', '=', scope).where('key', '=', key).where('created_at', '<', new Date(now.getTime() - TTL_MS)).execute();
    const taken = await db
      .insertInto('idempotency_keys')
      .values({ scope, key, request_hash: hash, state: 'in_flight', created_at: now })
      .onConflict((oc) => oc.doNothing())
      .returning('key')
      .executeTakeFirst();
    if (taken) {
      request.idempotency = { scope, key };
      return;
    }
    const stored = await db.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirst();
    if (!stored) throw new AppError('conflict', 'this Idempotency-Key is being processed; retry shortly');
    if (stored.request_hash !== hash) {
      throw new AppError('idempotency_key_reused', 'this Idempotency-Key was used with a different request body');
    }
    if (stored.state !== 'done') throw new AppError('conflict', 'a request with this Idempotency-Key is still in flight');
    reply.headers({ ...(stored.response_headers ?? {}), 'Idempotent-Replayed': 'true' });
    return reply.code(stored.response_status ?? 200).send(stored.response_body ?? '');
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const marker = request.idempotency;
    if (!marker) return payload;
    request.idempotency = undefined;
    const where = db.updateTable('idempotency_keys').where('scope', '=', marker.scope).where('key', '=', marker.key);
    if (reply.statusCode >= 500 || (typeof payload !== 'string' && !Buffer.isBuffer(payload) && payload != null)) {
      await db.deleteFrom('idempotency_keys').where('scope', '=', marker.scope).where('key', '=', marker.key).execute();
      return payload;
    }
    const contentType = reply.getHeader('content-type');
    const location = reply.getHeader('location');
    await where
      .set({
        state: 'done',
        response_status: reply.statusCode,
        response_headers: JSON.stringify({
          ...(contentType ? { 'content-type': String(contentType) } : {}),
          ...(location ? { location: String(location) } : {}),
        }),
        response_body: payload == null ? '' : payload.toString(),
      })
      .execute();
    return payload;
  });
}
