import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { IdParams } from '../../platform/http/schemas.ts';
import { Overview, RangeQuery, Series } from './schemas.ts';
import type { AnalyticsService } from './service.ts';

// Analytics over calls: the workspace's overview, one agent's, and calls per UTC day.

const tags = ['analytics'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;

export function analyticsRoutes(service: AnalyticsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/analytics/overview',
      { schema: { operationId: 'getAnalyticsOverview', summary: 'Calls, minutes, cost, statuses and transfer rate of the workspace', tags, querystring: RangeQuery, response: { 200: Overview } }, config: read },
      async (request) => service.workspace(workspaceOf(request), request.query),
    );
    app.get(
      '/v1/analytics/agents/:id',
      { schema: { operationId: 'getAgentAnalytics', summary: 'The same figures for one agent', tags, params: IdParams('Agent id (agent_…)'), querystring: RangeQuery, response: { 200: Overview } }, config: read },
      async (request) => service.agent(workspaceOf(request), request.params.id, request.query),
    );
    app.get(
      '/v1/analytics/calls',
      { schema: { operationId: 'getCallSeries', summary: 'Calls per UTC day (every day of the range, zero when none)', tags, querystring: RangeQuery, response: { 200: Series } }, config: read },
      async (request) => service.series(workspaceOf(request), request.query),
    );
  };
}
