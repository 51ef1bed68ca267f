import { sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';

// The analytics' reads of the calls (a read model: they write nothing), executor first.

type Range = { from: Date; to: Date };

export function createAnalyticsRepo() {
  return {
    /** Per status: count, summed duration and cost, and the answered calls' count and duration. */
    byStatus(db: Executor, workspaceId: string, range: Range, agentId?: string) {
      let query = db
        .selectFrom('calls')
        .select((eb) => [
          'status',
          eb.fn.countAll<number>().as('count'),
          sql<number>`coalesce(sum(duration_ms), 0)::bigint`.as('duration'),
          sql<number>`coalesce(sum(cost_micros), 0)::bigint`.as('cost'),
          sql<number>`count(*) filter (where answered_at is not null)`.as('answered'),
          sql<number>`coalesce(sum(duration_ms) filter (where answered_at is not null), 0)::bigint`.as('answered_duration'),
        ])
        .where('workspace_id', '=', workspaceId)
        .where('created_at', '>=', range.from)
        .where('created_at', '<', range.to)
        .groupBy('status');
      if (agentId) query = query.where('agent_id', '=', agentId);
      return query.execute();
    },
    /** Per UTC day with calls: count, summed duration and cost. */
    byDay(db: Executor, workspaceId: string, range: Range) {
      return db
        .selectFrom('calls')
        .select([
          sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`.as('day'),
          sql<number>`count(*)`.as('count'),
          sql<number>`coalesce(sum(duration_ms), 0)::bigint`.as('duration'),
          sql<number>`coalesce(sum(cost_micros), 0)::bigint`.as('cost'),
        ])
        .where('workspace_id', '=', workspaceId)
        .where('created_at', '>=', range.from)
        .where('created_at', '<', range.to)
        .groupBy(sql`1`)
        .execute();
    },
    /** Whether the workspace has (or had: deleted agents keep their calls' figures) this agent. */
    async hasAgent(db: Executor, workspaceId: string, agentId: string) {
      const row = await db.selectFrom('agents').select('id').where('workspace_id', '=', workspaceId).where('id', '=', agentId).executeTakeFirst();
      return row !== undefined;
    },
  };
}

export type AnalyticsRepo = ReturnType<typeof createAnalyticsRepo>;
