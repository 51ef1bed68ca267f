import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import type { Database } from '../../platform/db/schema.ts';
import { notFound } from '../../platform/errors.ts';
import { IdParams, Timestamp } from '../../platform/http/schemas.ts';
import { microsToUsd } from '../../platform/money.ts';
import type { Platform } from '../../platform/platform.ts';
import { DateRangeQuery, dateRangeOf, daysOf } from '../../platform/http/date-range.ts';

// Analytics over calls (created in [from, to), default the last 30 days): an overview for the
// workspace or one agent, and a series by UTC day with every day of the range present.

const tags = ['analytics'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const RangeQuery = DateRangeQuery('Calls created');
const Overview = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    total_calls: Type.Integer(),
    by_status: Type.Record(Type.String(), Type.Integer()),
    minutes: Type.Number({ description: 'Connected minutes' }),
    cost_usd: Type.Number(),
    avg_duration_ms: Type.Integer({ description: 'Mean connected time of the calls that were answered' }),
    transfer_rate: Type.Number({ description: 'Transferred calls / answered calls (0 when none was answered)' }),
  },
  { title: 'CallAnalytics' },
);
const Series = Type.Object(
  { data: Type.Array(Type.Object({ date: Type.String({ examples: ['2026-11-23'] }), count: Type.Integer(), minutes: Type.Number(), cost_usd: Type.Number() })) },
  { title: 'CallSeries' },
);

const rangeOf = dateRangeOf;

const round2 = (n: number) => Math.round(n * 100) / 100;

async function overview(db: Database, workspaceId: string, range: { from: Date; to: Date }, agentId?: string) {
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
  const rows = await query.execute();
  const by_status: Record<string, number> = {};
  let total = 0, duration = 0, cost = 0, answered = 0, answeredDuration = 0, transferred = 0;
  for (const row of rows) {
    const count = Number(row.count);
    by_status[row.status] = count;
    total += count;
    duration += Number(row.duration);
    cost += Number(row.cost);
    answered += Number(row.answered);
    answeredDuration += Number(row.answered_duration);
    if (row.status === 'transferred') transferred += count;
  }
  return {
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    total_calls: total,
    by_status,
    minutes: round2(duration / 60_000),
    cost_usd: microsToUsd(cost),
    avg_duration_ms: answered > 0 ? Math.round(answeredDuration / answered) : 0,
    transfer_rate: answered > 0 ? Math.round((transferred / answered) * 10_000) / 10_000 : 0,
  };
}

export function analyticsRoutes(platform: Platform): FastifyPluginAsyncTypebox {
  const { db, clock } = platform;
  return async (app) => {
    app.get(
      '/v1/analytics/overview',
      { schema: { operationId: 'getAnalyticsOverview', summary: 'Calls, minutes, cost, statuses and transfer rate of the workspace', tags, querystring: RangeQuery, response: { 200: Overview } }, config: read },
      async (request) => overview(db, workspaceOf(request).workspaceId, rangeOf(request.query, clock.now())),
    );
    app.get(
      '/v1/analytics/agents/:id',
      { schema: { operationId: 'getAgentAnalytics', summary: 'The same figures for one agent', tags, params: IdParams('Agent id (agent_…)'), querystring: RangeQuery, response: { 200: Overview } }, config: read },
      async (request) => {
        const workspaceId = workspaceOf(request).workspaceId;
        const agent = await db.selectFrom('agents').select('id').where('workspace_id', '=', workspaceId).where('id', '=', request.params.id).executeTakeFirst();
        if (!agent) throw notFound('agent');
        return overview(db, workspaceId, rangeOf(request.query, clock.now()), agent.id);
      },
    );
    app.get(
      '/v1/analytics/calls',
      { schema: { operationId: 'getCallSeries', summary: 'Calls per UTC day (every day of the range, zero when none)', tags, querystring: RangeQuery, response: { 200: Series } }, config: read },
      async (request) => {
        const range = rangeOf(request.query, clock.now());
        const rows = await db
          .selectFrom('calls')
          .select([
            sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`.as('day'),
            sql<number>`count(*)`.as('count'),
            sql<number>`coalesce(sum(duration_ms), 0)::bigint`.as('duration'),
            sql<number>`coalesce(sum(cost_micros), 0)::bigint`.as('cost'),
          ])
          .where('workspace_id', '=', workspaceOf(request).workspaceId)
          .where('created_at', '>=', range.from)
          .where('created_at', '<', range.to)
          .groupBy(sql`1`)
          .execute();
        const byDay = new Map(rows.map((r) => [r.day, r]));
        const data = daysOf(range).map((date) => {
          const row = byDay.get(date);
          return { date, count: Number(row?.count ?? 0), minutes: round2(Number(row?.duration ?? 0) / 60_000), cost_usd: microsToUsd(Number(row?.cost ?? 0)) };
        });
        return { data };
      },
    );
  };
}
