import type { WorkspaceContext } from '../../platform/auth/access.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Executor } from '../../platform/db/schema.ts';
import { notFound } from '../../platform/errors.ts';
import { dateRangeOf, perDayOf } from '../../platform/http/date-range.ts';
import { microsToUsd } from '../../platform/money.ts';
import type { CallFigures } from '../calls/figures.ts';
import type { AnalyticsRepo } from './repo.ts';

// Analytics over calls (created in [from, to), default the last 30 days): an overview for the
// workspace or one agent, and a series by UTC day with every day of the range present.

type RangeQuery = { from?: string; to?: string };

const round2 = (n: number) => Math.round(n * 100) / 100;

export interface AnalyticsServiceDeps {
  db: Executor;
  clock: Clock;
  analytics: AnalyticsRepo;
  /** The calls module's figures (the calls table is its own). */
  calls: Pick<CallFigures, 'byStatus' | 'byDay'>;
}

export function createAnalyticsService({ db, clock, analytics, calls }: AnalyticsServiceDeps) {
  async function overview(workspaceId: string, query: RangeQuery, agentId?: string) {
    const range = dateRangeOf(query, clock.now());
    const rows = await calls.byStatus(db, workspaceId, range, agentId);
    const by_status: Record<string, number> = {};
    let total = 0;
    let duration = 0;
    let cost = 0;
    let answered = 0;
    let answeredDuration = 0;
    let transferred = 0;
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

  return {
    workspace: (ctx: WorkspaceContext, query: RangeQuery) => overview(ctx.workspaceId, query),

    async agent(ctx: WorkspaceContext, agentId: string, query: RangeQuery) {
      if (!(await analytics.hasAgent(db, ctx.workspaceId, agentId))) throw notFound('agent');
      return overview(ctx.workspaceId, query, agentId);
    },

    async series(ctx: WorkspaceContext, query: RangeQuery) {
      const range = dateRangeOf(query, clock.now());
      const rows = await calls.byDay(db, ctx.workspaceId, range);
      const data = perDayOf(range, rows, (row, date) => ({
        date,
        count: Number(row?.count ?? 0),
        minutes: round2(Number(row?.duration ?? 0) / 60_000),
        cost_usd: microsToUsd(Number(row?.cost ?? 0)),
      }));
      return { data };
    },
  };
}

export type AnalyticsService = ReturnType<typeof createAnalyticsService>;
