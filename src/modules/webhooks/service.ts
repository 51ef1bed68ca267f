import type { WorkspaceContext } from '../../platform/auth/access.ts';
import type { GatePublisher } from '../../platform/auth/gate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { invalidField, invalidState, notFound } from '../../platform/errors.ts';
import { assertUrlField } from '../../platform/outbound/ssrf-guard.ts';
import { EVENT_TYPE_NAMES, EVENT_TYPES, exampleEnvelope, TENANT_DEFAULT_EVENTS } from '../../platform/outbox/catalog.ts';
import type { EventEngine } from '../../platform/outbox/emitter.ts';
import { newWebhookSecret } from '../../platform/outbox/signing.ts';
import { type PageRequest, toPage } from '../../platform/pagination.ts';
import type { WebhooksRepo } from './repo.ts';
import type { Attempt, Delivery, DeliveryDetail, PutWebhookBody, ReplayBody, TenantWebhook, TenantWebhookWithSecret } from './schemas.ts';
import type { DeliveryStatus, Destination, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from './tables.ts';
import type { Selectable } from 'kysely';

/** How long the previous secret keeps signing after a rotation. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3600 * 1000;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

function presentEndpoint(row: Selectable<WebhookEndpointsTable>): TenantWebhook {
  return { webhook_url: row.url, events: row.events, created_at: iso(row.created_at) as string, updated_at: iso(row.updated_at) as string };
}

function withSecret(row: Selectable<WebhookEndpointsTable>): TenantWebhookWithSecret {
  return { ...presentEndpoint(row), webhook_secret: row.secret, previous_secret_expires_at: iso(row.previous_secret_expires_at) };
}

export function presentDelivery(row: Selectable<WebhookDeliveriesTable>): Delivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    destination: row.destination,
    agent_id: row.agent_id,
    url: row.url,
    status: row.status,
    attempt_count: row.attempt_count,
    max_attempts: row.max_attempts,
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    last_attempt_at: iso(row.last_attempt_at),
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    created_at: iso(row.created_at) as string,
    updated_at: iso(row.updated_at) as string,
  };
}

function presentAttempt(row: Selectable<WebhookAttemptsTable>): Attempt {
  return {
    id: row.id,
    attempt: row.attempt,
    trigger: row.trigger,
    started_at: iso(row.started_at) as string,
    duration_ms: row.duration_ms,
    status_code: row.status_code,
    response_excerpt: row.response_excerpt,
    error: row.error,
  };
}

export function createWebhooksService(deps: { db: Database; clock: Clock; repo: WebhooksRepo; events: EventEngine; gate: GatePublisher; allowPrivateUrls: boolean }) {
  const { db, clock, repo, events, gate } = deps;

  /** After the commit: every instance drops the endpoint its emitter routes by (platform/outbox/tenant-endpoint-cache.ts). */
  const endpointChanged = (ctx: WorkspaceContext) => gate.publish([{ kind: 'webhook_endpoint', workspaceId: ctx.workspaceId }]);

  async function requireEndpoint(ctx: WorkspaceContext) {
    const row = await repo.findEndpoint(db, ctx.workspaceId);
    if (!row) throw notFound('webhook');
    return row;
  }

  async function requeue(ctx: WorkspaceContext, id: string, statuses: DeliveryStatus[], what: string): Promise<Delivery> {
    return db.transaction().execute(async (tx) => {
      const current = await repo.findDelivery(tx, ctx.workspaceId, id);
      if (!current) throw notFound('delivery');
      if (!statuses.includes(current.status)) throw invalidState(`delivery is ${current.status}; only ${what} deliveries can be given a new attempt`);
      const [row] = await repo.requeue(tx, ctx.workspaceId, { ids: [id], statuses }, clock.now());
      await events.announce(tx);
      return presentDelivery(row);
    });
  }

  return {
    async put(ctx: WorkspaceContext, body: PutWebhookBody): Promise<TenantWebhookWithSecret> {
      await assertUrlField('webhook_url', body.webhook_url, { allowPrivate: deps.allowPrivateUrls });
      const row = await repo.upsertEndpoint(db, {
        workspaceId: ctx.workspaceId,
        url: body.webhook_url,
        events: body.events ?? TENANT_DEFAULT_EVENTS,
        secret: newWebhookSecret(),
        now: clock.now(),
      });
      await endpointChanged(ctx);
      return withSecret(row);
    },

    async get(ctx: WorkspaceContext): Promise<TenantWebhook> {
      return presentEndpoint(await requireEndpoint(ctx));
    },

    async remove(ctx: WorkspaceContext): Promise<void> {
      const deleted = await db.transaction().execute((tx) => repo.deleteEndpoint(tx, ctx.workspaceId, clock.now()));
      if (!deleted) throw notFound('webhook');
      await endpointChanged(ctx);
    },

    /** Publishes nothing: the emitter keeps only URL and events, and each attempt reads the secrets. */
    async rotateSecret(ctx: WorkspaceContext): Promise<TenantWebhookWithSecret> {
      const now = clock.now();
      const row = await repo.rotateSecret(db, {
        workspaceId: ctx.workspaceId,
        secret: newWebhookSecret(),
        previousExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS),
        now,
      });
      if (!row) throw notFound('webhook');
      return withSecret(row);
    },

    async sendTest(ctx: WorkspaceContext): Promise<{ event_id: string; delivery_ids: string[] }> {
      await requireEndpoint(ctx);
      const emitted = await db.transaction().execute((tx) =>
        events.emit(tx, { workspaceId: ctx.workspaceId, type: 'webhook.test', data: { message: 'This is a test event from Voice Agent Platform.' }, tenantOnly: true, traceParent: ctx.traceParent }),
      );
      return { event_id: emitted.eventId, delivery_ids: emitted.deliveryIds };
    },

    eventTypes() {
      return {
        data: EVENT_TYPE_NAMES.map((type) => {
          const info = EVENT_TYPES[type];
          const destinations: Destination[] = info.agent ? ['agent', 'tenant'] : ['tenant'];
          return { type, listing: info.listing, description: info.description, destinations, tenant_default: info.tenantDefault, example: exampleEnvelope(type) };
        }),
        has_more: false,
        next_cursor: null,
      };
    },

    async listDeliveries(ctx: WorkspaceContext, filter: { statuses?: DeliveryStatus[]; eventType?: string; destination?: Destination }, page: PageRequest) {
      const rows = await repo.listDeliveries(db, ctx.workspaceId, filter, page);
      return toPage(rows, page, (r) => r.id, presentDelivery);
    },

    async getDelivery(ctx: WorkspaceContext, id: string): Promise<DeliveryDetail> {
      const row = await repo.findDelivery(db, ctx.workspaceId, id);
      if (!row) throw notFound('delivery');
      const attempts = await repo.listAttempts(db, ctx.workspaceId, id);
      return { ...presentDelivery(row), payload: JSON.parse(row.payload), attempts: attempts.map(presentAttempt) };
    },

    /** A new attempt now for a finished delivery (a resend of a succeeded one included). */
    retry: (ctx: WorkspaceContext, id: string) => requeue(ctx, id, ['succeeded', 'failed', 'dead'], 'finished'),

    /** A new attempt now for a failed or dead delivery. */
    replay: (ctx: WorkspaceContext, id: string) => requeue(ctx, id, ['failed', 'dead'], 'failed or dead'),

    async replayAll(ctx: WorkspaceContext, body: ReplayBody): Promise<{ replayed: number }> {
      const since = body.since ? new Date(body.since) : undefined;
      const until = body.until ? new Date(body.until) : undefined;
      if (since && until && since > until) throw invalidField('until', 'must not be before since');
      return db.transaction().execute(async (tx) => {
        const rows = await repo.requeue(tx, ctx.workspaceId, { statuses: ['failed', 'dead'], eventType: body.event_type, since, until }, clock.now());
        if (rows.length > 0) await events.announce(tx);
        return { replayed: rows.length };
      });
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
