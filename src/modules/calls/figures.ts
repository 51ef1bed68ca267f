import { type Expression, sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';

// The calls' figures other modules show, read here because the calls module owns the table: the
// analytics' counts by status and by UTC day, the usage's spend per agent (the wallet's charges
// joined to their calls) and the voice sessions' connected time and cost. Executor first; the
// composition root (src/app.ts) hands them to those modules. They write nothing.

type Range = { from: Date; to: Date };

/** A call's charge as the wallet's ledger query selects it: the call's id and the charged micro-USD (negative). */
export interface CallCharge {
  call_id: string | null;
  amount_micros: number;
}

export function createCallFigures() {
  return {
    /** Calls created in the range, per status: count, summed duration and cost, and the answered calls' count and duration. */
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

    /** Calls created in the range, per UTC day of created_at with calls: count, summed duration and cost. */
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

    /** What the given charges (the wallet's query, run as a subquery) spent per agent of their calls: micro-USD, calls, billed seconds. */
    spendByAgent(db: Executor, charges: Expression<CallCharge>) {
      return db
        .selectFrom(sql<CallCharge>`${charges}`.as('charges'))
        .innerJoin('calls', 'calls.id', 'charges.call_id')
        .select(['calls.agent_id', sql<number>`-sum(charges.amount_micros)`.as('micros'), sql<number>`count(*)`.as('calls'), sql<number>`sum(calls.billed_seconds)`.as('seconds')])
        .groupBy('calls.agent_id')
        .execute();
    },

    /** The connected time and cost of these calls of these workspaces (a page of voice sessions' calls, in one query). */
    durationAndCost(db: Executor, workspaceIds: string[], callIds: string[]) {
      return db.selectFrom('calls').select(['id', 'duration_ms', 'cost_micros']).where('workspace_id', 'in', workspaceIds).where('id', 'in', callIds).execute();
    },
  };
}

export type CallFigures = ReturnType<typeof createCallFigures>;
