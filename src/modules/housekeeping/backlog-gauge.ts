import type { FastifyBaseLogger } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';

// webhook_oldest_pending_delivery_age_seconds: how long the most overdue pending delivery has
// been due (clock now − its next_attempt_at), 0 when nothing is due. A healthy worker keeps it
// near 0; a stalled or saturated one makes it climb, whatever the retry schedule (a delivery
// waiting for its backoff, or leased by a worker, is not due and does not count).
// Read at scrape time from the partial index of the queue (webhook_deliveries_due_idx).

export function registerDeliveryBacklogGauge(registry: Registry, deps: { db: Database; clock: Clock; logger: FastifyBaseLogger }) {
  const { db, clock, logger } = deps;
  return new Gauge({
    name: 'webhook_oldest_pending_delivery_age_seconds',
    help: 'Seconds the oldest due pending webhook delivery has been waiting for its attempt (0 when none is due)',
    registers: [registry],
    async collect() {
      const now = clock.now();
      try {
        const row = await db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.min('next_attempt_at').as('oldest'))
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', now)
          .executeTakeFirst();
        const oldest = row?.oldest ? new Date(row.oldest) : null;
        this.set(oldest ? Math.max(0, (now.getTime() - oldest.getTime()) / 1000) : 0);
      } catch (err) {
        // Unknown rather than a stale or reassuring value; the rest of /metrics still answers.
        logger.warn({ err }, 'webhook backlog gauge: query failed');
        this.set(Number.NaN);
      }
    },
  });
}
