import type { FastifyInstance } from 'fastify';
import type { Clock } from './clock.ts';
import type { Database, Executor } from './db/schema.ts';
import { newId } from './ids.ts';

// The audit trail: every non-GET request acting in a workspace, and every API-key use (first use
// per key per minute), as one row each. Never bodies or secrets.

export interface AuditEntry {
  workspaceId: string;
  actorType: 'user' | 'api_key';
  actorId: string;
  actorName: string | null;
  action: string;
  method: string;
  route: string;
  resourceId: string | null;
  statusCode: number;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

const MAX_TEXT = 512;
/** Lone UTF-16 surrogates, which have no UTF-8 form. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A request-supplied text as PostgreSQL accepts it: what it refuses becomes U+FFFD, and the text
 * is cut to 512 characters, so a hostile path (`/v1/agents/%00/duplicate`) or header never
 * costs the request its audit row.
 */
export function storableText(text: string): string;
export function storableText(text: string | null): string | null;
export function storableText(text: string | null): string | null {
  if (text === null) return null;
  // NUL: PostgreSQL refuses it in text.
  return text.slice(0, MAX_TEXT).replaceAll('\u0000', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');
}

export function createAuditWriter(deps: { db: Database; clock: Clock }) {
  return {
    async write(entry: AuditEntry, executor: Executor = deps.db): Promise<void> {
      await executor
        .insertInto('audit_log')
        .values({
          id: newId('aud'),
          workspace_id: entry.workspaceId,
          actor_type: entry.actorType,
          actor_id: entry.actorId,
          actor_name: storableText(entry.actorName),
          action: storableText(entry.action),
          method: storableText(entry.method),
          route: storableText(entry.route),
          resource_id: storableText(entry.resourceId),
          status_code: entry.statusCode,
          ip: storableText(entry.ip),
          user_agent: storableText(entry.userAgent),
          request_id: storableText(entry.requestId),
          created_at: deps.clock.now(),
        })
        .execute();
    },
  };
}

export type AuditWriter = ReturnType<typeof createAuditWriter>;

/**
 * `POST /v1/agents/:id/duplicate` → `agents.duplicate`; `DELETE /v1/agents/:id` → `agents.delete`;
 * `POST /v1/phone-numbers/buy` → `phone_numbers.buy` (hyphens become underscores everywhere).
 */
export function actionName(method: string, route: string): string {
  const parts = route.replace(/^\/v1\//, '').split('/').filter((p) => p && !p.startsWith(':'));
  const resource = (parts[0] ?? 'root').replaceAll('-', '_');
  const verbByMethod: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };
  const tail = parts.length > 1 ? parts.slice(1).join('.') : undefined;
  const lastIsParam = route.endsWith('}') || /\/:[^/]+$/.test(route);
  if (tail && !lastIsParam) return `${resource}.${tail.replaceAll('-', '_')}`;
  return `${resource}.${tail ? `${tail.replaceAll('-', '_')}.` : ''}${verbByMethod[method] ?? method.toLowerCase()}`;
}

/**
 * Writes one audit row per non-GET workspace request, in onSend so the row exists when the
 * caller sees the response (a client can read its own action back at once).
 */
export function registerAuditTrail(app: FastifyInstance, writer: AuditWriter) {
  app.addHook('onSend', async (request, reply, payload) => {
    const workspace = request.workspace;
    const config = request.routeOptions.config;
    if (!workspace || config?.audit?.skip || request.method === 'GET' || request.method === 'HEAD') return payload;
    const route = request.routeOptions.url ?? request.url;
    const params = (request.params ?? {}) as Record<string, string>;
    const resourceId = request.auditResourceId ?? params[config?.audit?.resourceParam ?? 'id'] ?? null;
    try {
      await writer.write({
        workspaceId: workspace.workspaceId,
        actorType: workspace.actor.type,
        actorId: workspace.actor.id,
        actorName: workspace.actor.name,
        action: actionName(request.method, route),
        method: request.method,
        route,
        resourceId,
        statusCode: reply.statusCode,
        ip: request.ip,
        userAgent: request.headers['user-agent'] ?? null,
        requestId: String(request.id),
      });
    } catch (error) {
      // An audit failure (the database unavailable) never fails the request.
      request.log.warn({ err: error }, 'audit row not written');
    }
    return payload;
  });
}
