import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { IdParams, ListOf } from '../../platform/http/schemas.ts';
import { Schedule, ScheduleCreate, ScheduleListQuery, ScheduleUpdate } from './schemas.ts';
import { present, type SchedulesService } from './service.ts';

// Schedules: one outbound call placed at a given time. POST/GET /v1/schedules, GET/PATCH/DELETE
// /v1/schedules/{id} (DELETE cancels), POST /v1/schedules/{id}/run (fire now).

const tags = ['schedules'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const write = { access: { auth: 'workspace', scope: 'write' } } as const;
const Params = IdParams('Schedule id (sch_…)');

export function schedulesRoutes(service: SchedulesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/schedules',
      {
        schema: { operationId: 'createSchedule', summary: 'Schedule an outbound call', tags, body: ScheduleCreate, response: { 201: Schedule } },
        config: write,
      },
      async (request, reply) => {
        const row = await service.create(workspaceOf(request).workspaceId, request.body);
        request.auditResourceId = row.id;
        return reply.code(201).send(present(row));
      },
    );

    app.get(
      '/v1/schedules',
      { schema: { operationId: 'listSchedules', summary: 'Schedules, newest first', tags, querystring: ScheduleListQuery, response: { 200: ListOf(Schedule, 'ScheduleList') } }, config: read },
      async (request) => service.list(workspaceOf(request).workspaceId, request.query),
    );

    app.get('/v1/schedules/:id', { schema: { operationId: 'getSchedule', summary: 'One schedule', tags, params: Params, response: { 200: Schedule } }, config: read }, async (request) =>
      present(await service.scheduleOf(workspaceOf(request).workspaceId, request.params.id)),
    );

    app.patch(
      '/v1/schedules/:id',
      {
        schema: { operationId: 'updateSchedule', summary: 'Change a schedule (only while scheduled; else 409 invalid_state)', tags, params: Params, body: ScheduleUpdate, response: { 200: Schedule } },
        config: write,
      },
      async (request) => present(await service.update(workspaceOf(request).workspaceId, request.params.id, request.body)),
    );

    app.delete(
      '/v1/schedules/:id',
      {
        schema: { operationId: 'cancelSchedule', summary: 'Cancel a schedule (409 invalid_state once dispatched or failed)', tags, params: Params, response: { 200: Schedule } },
        config: write,
      },
      async (request) => present(await service.cancel(workspaceOf(request).workspaceId, request.params.id)),
    );

    app.post(
      '/v1/schedules/:id/run',
      {
        schema: {
          operationId: 'runSchedule',
          summary: 'Place the scheduled call now (409 invalid_state unless scheduled; refusals as POST /v1/calls/outbound)',
          tags,
          params: Params,
          response: { 200: Schedule },
        },
        config: write,
      },
      async (request) => present(await service.run(workspaceOf(request).workspaceId, request.params.id)),
    );
  };
}
