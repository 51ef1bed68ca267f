import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { workspaceOf } from '../../../platform/auth/authenticate.ts';
import { IdParams } from '../../../platform/http/schemas.ts';
import { Call } from '../schemas.ts';
import { InboundCallBody, OutboundCallBody, TransferBody } from '../schemas-control.ts';
import type { CallsService } from '../service.ts';
import type { CallRow } from '../tables.ts';

// Routes that change a call: place, hang up, transfer, analyse; and the sandbox's inbound call.

const CallParams = IdParams('Call id (call_…)');
const tags = ['calls'];
const write = { access: { auth: 'workspace', scope: 'write' } } as const;

export function callControlRoutes(service: CallsService, present: (row: CallRow) => unknown): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/calls/outbound',
      {
        schema: {
          operationId: 'createOutboundCall',
          summary: 'Place an outbound call: 201 with the queued call; it starts when the workspace has a free slot (never 429)',
          tags,
          body: OutboundCallBody,
          response: { 201: Call },
        },
        config: write,
      },
      async (request, reply) => {
        const row = await service.placeOutbound(workspaceOf(request).workspaceId, request.body, workspaceOf(request).traceParent);
        request.auditResourceId = row.id;
        return reply.code(201).send(present(row) as never);
      },
    );

    app.post(
      '/v1/calls/:id/hangup',
      {
        schema: {
          operationId: 'hangupCall',
          summary: 'End a call: a live call becomes completed (api_hangup), a queued or ringing one canceled; 409 once ended',
          tags,
          params: CallParams,
          response: { 200: Call },
        },
        config: write,
      },
      async (request) => present(await service.hangup(workspaceOf(request).workspaceId, request.params.id)) as never,
    );

    app.post(
      '/v1/calls/:id/transfer',
      {
        schema: {
          operationId: 'transferCall',
          summary: "Transfer a call in progress to a number (default the agent's transfer_number); 409 when not in progress",
          tags,
          params: CallParams,
          body: TransferBody,
          response: { 200: Call },
        },
        config: write,
      },
      async (request) => present(await service.transfer(workspaceOf(request).workspaceId, request.params.id, request.body.to)) as never,
    );

    app.post(
      '/v1/calls/:id/analyze',
      {
        schema: {
          operationId: 'analyzeCall',
          summary: "Run extraction again on an ended call's transcript with the agent's current extraction_fields",
          tags,
          params: CallParams,
          response: { 200: Call },
        },
        config: write,
      },
      async (request) => present(await service.analyze(workspaceOf(request).workspaceId, request.params.id)) as never,
    );

    app.post(
      '/v1/sandbox/inbound-call',
      {
        schema: {
          operationId: 'createSandboxInboundCall',
          summary: "Simulate a caller dialing one of the workspace's numbers: the assigned agent answers at once (sandbox telephony)",
          tags: ['sandbox'],
          body: InboundCallBody,
          response: { 201: Call },
        },
        config: write,
      },
      async (request, reply) => {
        const row = await service.receiveSandboxCall(workspaceOf(request).workspaceId, request.body, workspaceOf(request).traceParent);
        request.auditResourceId = row.id;
        return reply.code(201).send(present(row) as never);
      },
    );
  };
}
