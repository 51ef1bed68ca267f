import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { WorkspaceContext } from '../../platform/auth/access.ts';
import { EmptyBody, NoContent } from '../../platform/http/schemas.ts';
import { pageRequest } from '../../platform/pagination.ts';
import {
  DeliveriesQuery,
  DeliveryDetail,
  DeliveryList,
  DeliveryParams,
  Delivery,
  EventTypeList,
  FailedQuery,
  PutWebhookBody,
  ReplayBody,
  ReplayResult,
  TenantWebhook,
  TenantWebhookWithSecret,
  TestResult,
} from './schemas.ts';
import type { WebhooksService } from './service.ts';

const tags = ['webhooks'];
const write = { access: { auth: 'workspace', scope: 'write' } } as const;
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;

function workspaceOf(request: FastifyRequest): WorkspaceContext {
  if (!request.workspace) throw new Error('route without workspace access');
  return request.workspace;
}

export function webhooksRoutes(service: WebhooksService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.put(
      '/v1/webhooks',
      {
        schema: {
          operationId: 'putWebhook',
          summary: 'Set the tenant webhook (URL and events); creates its secret the first time',
          description: 'The secret is kept when the URL or events change; it changes only by rotate-secret. A private or non-http(s) URL is 422.',
          tags,
          body: PutWebhookBody,
          response: { 200: TenantWebhookWithSecret },
        },
        config: write,
      },
      async (request) => service.put(workspaceOf(request), request.body),
    );

    app.get(
      '/v1/webhooks',
      {
        schema: { operationId: 'getWebhook', summary: 'The tenant webhook (never its secret); 404 when none is set', tags, response: { 200: TenantWebhook } },
        config: read,
      },
      async (request) => service.get(workspaceOf(request)),
    );

    app.delete(
      '/v1/webhooks',
      {
        schema: { operationId: 'deleteWebhook', summary: 'Remove the tenant webhook; its pending deliveries become failed', tags, response: { 204: NoContent } },
        config: write,
      },
      async (request, reply) => {
        await service.remove(workspaceOf(request));
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/webhooks/rotate-secret',
      {
        schema: {
          operationId: 'rotateWebhookSecret',
          summary: 'Replace the tenant webhook secret; the old one keeps signing beside it for 24 h',
          tags,
          body: EmptyBody,
          response: { 200: TenantWebhookWithSecret },
        },
        config: write,
      },
      async (request) => service.rotateSecret(workspaceOf(request)),
    );

    app.post(
      '/v1/webhooks/test',
      {
        schema: {
          operationId: 'testWebhook',
          summary: 'Send a webhook.test event to the tenant webhook through the delivery engine',
          tags,
          body: EmptyBody,
          response: { 202: TestResult },
        },
        config: write,
      },
      async (request, reply) => reply.code(202).send(await service.sendTest(workspaceOf(request))),
    );

    app.get(
      '/v1/webhooks/event-types',
      {
        schema: { operationId: 'listWebhookEventTypes', summary: 'Every event the platform sends, with its envelope and an example', tags, response: { 200: EventTypeList } },
        config: read,
      },
      async () => service.eventTypes(),
    );

    app.get(
      '/v1/webhooks/deliveries',
      {
        schema: {
          operationId: 'listWebhookDeliveries',
          summary: "Deliveries of the workspace's events (agent and tenant webhooks), newest first",
          tags,
          querystring: DeliveriesQuery,
          response: { 200: DeliveryList },
        },
        config: read,
      },
      async (request) => {
        const { status, event_type, destination } = request.query;
        return service.listDeliveries(
          workspaceOf(request),
          { statuses: status ? [status] : undefined, eventType: event_type, destination },
          pageRequest(request.query),
        );
      },
    );

    app.get(
      '/v1/webhooks/deliveries/:id',
      {
        schema: { operationId: 'getWebhookDelivery', summary: 'A delivery with its body and attempts', tags, params: DeliveryParams, response: { 200: DeliveryDetail } },
        config: read,
      },
      async (request) => service.getDelivery(workspaceOf(request), request.params.id),
    );

    app.post(
      '/v1/webhooks/deliveries/:id/retry',
      {
        schema: {
          operationId: 'retryWebhookDelivery',
          summary: 'Add one attempt now to a finished delivery (same event id and webhook-id)',
          description: 'A pending delivery already has an attempt due: 409 invalid_state.',
          tags,
          params: DeliveryParams,
          body: EmptyBody,
          response: { 202: Delivery },
        },
        config: write,
      },
      async (request, reply) => reply.code(202).send(await service.retry(workspaceOf(request), request.params.id)),
    );

    app.get(
      '/v1/webhooks/failed',
      {
        schema: {
          operationId: 'listFailedWebhookDeliveries',
          summary: 'Failed (4xx) and dead (attempts exhausted) deliveries, newest first',
          tags,
          querystring: FailedQuery,
          response: { 200: DeliveryList },
        },
        config: read,
      },
      async (request) =>
        service.listDeliveries(workspaceOf(request), { statuses: ['failed', 'dead'], eventType: request.query.event_type }, pageRequest(request.query)),
    );

    app.post(
      '/v1/webhooks/failed/:id/replay',
      {
        schema: {
          operationId: 'replayFailedWebhookDelivery',
          summary: 'Replay a failed or dead delivery: one new attempt now, same event id',
          tags,
          params: DeliveryParams,
          body: EmptyBody,
          response: { 202: Delivery },
        },
        config: write,
      },
      async (request, reply) => reply.code(202).send(await service.replay(workspaceOf(request), request.params.id)),
    );

    app.post(
      '/v1/webhooks/failed/replay',
      {
        schema: {
          operationId: 'replayFailedWebhookDeliveries',
          summary: 'Replay failed and dead deliveries (at most 1,000, oldest first), optionally filtered',
          tags,
          body: ReplayBody,
          response: { 202: ReplayResult },
        },
        config: write,
      },
      async (request, reply) => reply.code(202).send(await service.replayAll(workspaceOf(request), request.body)),
    );
  };
}
