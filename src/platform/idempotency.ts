import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from './clock.ts';
import type { Database } from './db/schema.ts';
import { AppError } from './errors.ts';
import { sha256Hex } from './secrets.ts';

// Idempotency-Key on any POST: the first request with a key runs and its response is stored;
// the same key with the same request within 24 h replays that response (Idempotent-Replayed: true);
// the same key with another request is 422 idempotency_key_reused; the same key still running is 409.
// Keys are scoped to the caller (principal, or IP on public routes). A 5xx frees the key again, and
// so does an in-flight record older than IN_FLIGHT_LEASE_MS (its instance died before answering).
//
// A stored response can hold a secret shown once (a new API key, a webhook secret), and secrets are
// stored hashed only. So the table keeps the Idempotency-Key as its SHA-256 and the response body
// encrypted (AES-256-GCM) with a key derived from the raw Idempotency-Key, which only the client has:
// the database alone cannot reveal a replayable response.

const TTL_MS = 24 * 3_600_000;
export const IN_FLIGHT_LEASE_MS = 5 * 60_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { scope: string; key: string; secret: Buffer };
  }
}

export function callerScope(request: FastifyRequest): string {
  const principal = request.principal;
  const workspace = request.workspace?.workspaceId ?? '-';
  if (principal?.type === 'api_key') return `key:${principal.keyId}`;
  if (principal?.type === 'user') return `usr:${principal.userId}:${workspace}`;
  return `ip:${request.ip}`;
}

/** How an Idempotency-Key is stored: its SHA-256 only. */
const storedIdempotencyKey = (key: string) => sha256Hex(`idempotency-key:${key}`);

function bodyKey(scope: string, key: string): Buffer {
  return createHash('sha256').update(`idempotency-body\u0000${scope}\u0000${key}`).digest();
}

function seal(plain: Buffer, secret: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', secret, iv);
  const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
  return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), sealed.toString('base64')].join('.');
}

function unseal(text: string, secret: Buffer): Buffer {
  const [version, iv, tag, sealed] = text.split('.');
  if (version !== 'v1' || iv === undefined || tag === undefined || sealed === undefined) throw new AppError('internal', 'stored response is unreadable');
  const decipher = createDecipheriv('aes-256-gcm', secret, Buffer.from(iv, 'base64'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64')), decipher.final()]);
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function requestHash(request: FastifyRequest): string {
  const route = request.routeOptions.url ?? request.url;
  const body = Buffer.isBuffer(request.body) ? request.body.toString('base64') : canonicalJson(request.body);
  return sha256Hex(`${request.method} ${route} ${canonicalJson(request.params ?? {})} ${canonicalJson(request.query ?? {})} ${body}`);
}

export function registerIdempotency(app: FastifyInstance, deps: { db: Database; clock: Clock }) {
  const { db, clock } = deps;

  app.addHook('preHandler', async (request, reply) => {
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined) return;
    const raw = Array.isArray(header) ? header[0] : header;
    if (!KEY_PATTERN.test(raw)) {
      throw new AppError('validation_failed', 'Idempotency-Key must be 1-255 visible ASCII characters', {
        errors: [{ path: 'headers.idempotency-key', message: 'must be 1-255 visible ASCII characters' }],
      });
    }
    const scope = callerScope(request);
    const key = storedIdempotencyKey(raw);
    const hash = requestHash(request);
    const now = clock.now();
    const where = db.deleteFrom('idempotency_keys').where('scope', '=', scope).where('key', '=', key);
    // Drop an expired record of this key, and an in-flight one whose instance never answered.
    await where
      .where((eb) =>
        eb.or([
          eb('created_at', '<', new Date(now.getTime() - TTL_MS)),
          eb.and([eb('state', '=', 'in_flight'), eb('created_at', '<', new Date(now.getTime() - IN_FLIGHT_LEASE_MS))]),
        ]),
      )
      .execute();
    const taken = await db
      .insertInto('idempotency_keys')
      .values({ scope, key, request_hash: hash, state: 'in_flight', created_at: now })
      .onConflict((oc) => oc.doNothing())
      .returning('key')
      .executeTakeFirst();
    if (taken) {
      request.idempotency = { scope, key, secret: bodyKey(scope, raw) };
      return;
    }
    const stored = await db.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirst();
    if (!stored) throw new AppError('conflict', 'this Idempotency-Key is being processed; retry shortly');
    if (stored.request_hash !== hash) {
      throw new AppError('idempotency_key_reused', 'this Idempotency-Key was used with a different request');
    }
    if (stored.state !== 'done') throw new AppError('conflict', 'a request with this Idempotency-Key is still in flight');
    const headers = typeof stored.response_headers === 'string' ? JSON.parse(stored.response_headers) : (stored.response_headers ?? {});
    const body = stored.response_body ? unseal(stored.response_body, bodyKey(scope, raw)) : Buffer.alloc(0);
    reply.headers({ ...headers, 'Idempotent-Replayed': 'true' });
    return reply.code(stored.response_status ?? 200).send(body);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const marker = request.idempotency;
    if (!marker) return payload;
    request.idempotency = undefined;
    const storable = payload == null || typeof payload === 'string' || Buffer.isBuffer(payload);
    if (reply.statusCode >= 500 || !storable) {
      await db.deleteFrom('idempotency_keys').where('scope', '=', marker.scope).where('key', '=', marker.key).execute();
      return payload;
    }
    const contentType = reply.getHeader('content-type');
    const location = reply.getHeader('location');
    const bytes = payload == null ? Buffer.alloc(0) : Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
    await db
      .updateTable('idempotency_keys')
      .where('scope', '=', marker.scope)
      .where('key', '=', marker.key)
      .set({
        state: 'done',
        response_status: reply.statusCode,
        response_headers: JSON.stringify({
          ...(contentType ? { 'content-type': String(contentType) } : {}),
          ...(location ? { location: String(location) } : {}),
        }),
        response_body: bytes.length > 0 ? seal(bytes, marker.secret) : '',
      })
      .execute();
    return payload;
  });
}
