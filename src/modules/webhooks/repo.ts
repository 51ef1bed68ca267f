import { sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import type { DeliveryStatus, Destination } from './tables.ts';

// Queries of the tenant webhook API. Every read is scoped by workspace: another workspace's
// delivery is simply not found.

export const MAX_REPLAY = 1000;

export interface DeliveryFilter {
  statuses?: DeliveryStatus[];
  eventType?: string;
  destination?: Destination;
}

export function createWebhooksRepo() {
  return {
    findEndpoint(db: Executor, workspaceId: string) {
      return db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
    },

    /** Creates the tenant webhook, or changes its URL and events (the secret is kept). */
    upsertEndpoint(db: Executor, row: { workspaceId: string; url: string; events: string[]; secret: string; now: Date }) {
      return db
        .insertInto('webhook_endpoints')
        .values({ workspace_id: row.workspaceId, url: row.url, secret: row.secret, events: JSON.stringify(row.events), created_at: row.now, updated_at: row.now })
        .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ url: row.url, events: JSON.stringify(row.events), updated_at: row.now }))
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    rotateSecret(db: Executor, row: { workspaceId: string; secret: string; previousExpiresAt: Date; now: Date }) {
      return db
        .updateTable('webhook_endpoints')
        .set((eb) => ({ previous_secret: eb.ref('secret'), previous_secret_expires_at: row.previousExpiresAt, secret: row.secret, updated_at: row.now }))
        .where('workspace_id', '=', row.workspaceId)
        .returningAll()
        .executeTakeFirst();
    },

    async deleteEndpoint(db: Executor, workspaceId: string, now: Date): Promise<boolean> {
      const deleted = await db.deleteFrom('webhook_endpoints').where('workspace_id', '=', workspaceId).executeTakeFirst();
      if (Number(deleted.numDeletedRows) === 0) return false;
      // Nothing is sent to a webhook that no longer exists; the rows stay replayable.
      await db
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', next_attempt_at: null, lease_holder: null, lease_expires_at: null, last_error: 'the tenant webhook was deleted', updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('destination', '=', 'tenant')
        .where('status', '=', 'pending')
        .execute();
      return true;
    },

    listDeliveries(db: Executor, workspaceId: string, filter: DeliveryFilter, page: { limit: number; after?: string }) {
      let query = db.selectFrom('webhook_deliveries').selectAll().where('workspace_id', '=', workspaceId);
      if (filter.statuses) query = query.where('status', 'in', filter.statuses);
      if (filter.eventType) query = query.where('event_type', '=', filter.eventType);
      if (filter.destination) query = query.where('destination', '=', filter.destination);
      if (page.after) query = query.where('id', '<', page.after);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },

    findDelivery(db: Executor, workspaceId: string, id: string) {
      return db
        .selectFrom('webhook_deliveries')
        .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
        .selectAll('webhook_deliveries')
        .select('webhook_events.payload')
        .where('webhook_deliveries.workspace_id', '=', workspaceId)
        .where('webhook_deliveries.id', '=', id)
        .executeTakeFirst();
    },

    listAttempts(db: Executor, workspaceId: string, deliveryId: string) {
      return db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('delivery_id', '=', deliveryId)
        .orderBy('attempt', 'asc')
        .execute();
    },

    /**
     * Adds one attempt, due now, to finished deliveries: same delivery, same event id, and the
     * schedule is not restarted (a failed manual attempt is final).
     */
    requeue(db: Executor, workspaceId: string, select: { ids?: string[]; statuses: DeliveryStatus[]; eventType?: string; since?: Date; until?: Date }, now: Date) {
      let ids = db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('status', 'in', select.statuses);
      if (select.ids) ids = ids.where('id', 'in', select.ids);
      if (select.eventType) ids = ids.where('event_type', '=', select.eventType);
      if (select.since) ids = ids.where('created_at', '>=', select.since);
      if (select.until) ids = ids.where('created_at', '<=', select.until);
      return db
        .updateTable('webhook_deliveries')
        .set({
          status: 'pending',
          next_attempt_at: now,
          next_trigger: 'manual',
          max_attempts: sql<number>`attempt_count + 1`,
          lease_holder: null,
          lease_expires_at: null,
          updated_at: now,
        })
        .where('id', 'in', ids.orderBy('id', 'asc').limit(MAX_REPLAY))
        .where('workspace_id', '=', workspaceId)
        .where('status', 'in', select.statuses)
        .returningAll()
        .execute();
    },
  };
}

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>;
