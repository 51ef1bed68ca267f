import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { IdParams, NoContent } from '../../platform/http/schemas.ts';
import type { AgentsService } from './service.ts';
import {
  Agent,
  AgentCreate,
  AgentDuplicate,
  AgentListQuery,
  AgentUpdate,
  AgentWithSecret,
  ChatBody,
  ChatReply,
  FunctionTestBody,
  FunctionTestResult,
  WebhookSecret,
  WebhookTestBody,
  WebhookTestResult,
} from './schemas.ts';
import { ListOf } from '../../platform/http/schemas.ts';

const AgentParams = IdParams('Agent id (agent_…)');
const tags = ['agents'];
const write = { access: { auth: 'workspace', scope: 'write' } } as const;
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
export function agentsRoutes(service: AgentsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/agents',
      {
        schema: {
          operationId: 'createAgent',
          summary: 'Create an agent; the answer carries its webhook_secret, shown only this once',
          tags,
          body: AgentCreate,
          response: { 201: AgentWithSecret },
        },
        config: write,
      },
      async (request, reply) => {
        const created = await service.create(workspaceOf(request), request.body);
        request.auditResourceId = created.id;
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/v1/agents',
      {
        schema: {
          operationId: 'listAgents',
          summary: 'List agents, newest first (filter by name substring or language)',
          tags,
          querystring: AgentListQuery,
          response: { 200: ListOf(Agent, 'AgentList') },
        },
        config: read,
      },
      async (request) => service.list(workspaceOf(request), request.query),
    );

    app.get(
      '/v1/agents/:id',
      {
        schema: { operationId: 'getAgent', summary: 'Get an agent (never its webhook secret)', tags, params: AgentParams, response: { 200: Agent } },
        config: read,
      },
      async (request) => service.get(workspaceOf(request), request.params.id),
    );

    app.patch(
      '/v1/agents/:id',
      {
        schema: {
          operationId: 'updateAgent',
          summary: 'Change some fields of an agent (llm is merged, other fields replaced)',
          tags,
          params: AgentParams,
          body: AgentUpdate,
          response: { 200: Agent },
        },
        config: write,
      },
      async (request) => service.update(workspaceOf(request), request.params.id, request.body),
    );

    app.delete(
      '/v1/agents/:id',
      {
        schema: { operationId: 'deleteAgent', summary: 'Delete an agent (its calls keep naming it)', tags, params: AgentParams, response: { 204: NoContent } },
        config: write,
      },
      async (request, reply) => {
        await service.remove(workspaceOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/agents/:id/duplicate',
      {
        schema: {
          operationId: 'duplicateAgent',
          summary: 'Copy an agent under a new id, name "<name> (copy)" and a new webhook secret (shown once)',
          tags,
          params: AgentParams,
          body: AgentDuplicate,
          response: { 201: AgentWithSecret },
        },
        config: write,
      },
      async (request, reply) => {
        const created = await service.duplicate(workspaceOf(request), request.params.id, request.body);
        request.auditResourceId = created.id;
        return reply.code(201).send(created);
      },
    );

    app.post(
      '/v1/agents/:id/webhook-secret/rotate',
      {
        schema: {
          operationId: 'rotateAgentWebhookSecret',
          summary: 'Replace the agent webhook secret; the old one is still sent in webhook-signature for 24 h',
          tags,
          params: AgentParams,
          response: { 200: WebhookSecret },
        },
        config: write,
      },
      async (request) => service.rotateSecret(workspaceOf(request), request.params.id),
    );

    app.post(
      '/v1/agents/:id/webhook/test',
      {
        schema: {
          operationId: 'testAgentWebhook',
          summary: "Send a webhook.test event to the agent's webhook_url through the delivery engine (409 when it has none)",
          tags,
          params: AgentParams,
          body: WebhookTestBody,
          response: { 202: WebhookTestResult },
        },
        config: write,
      },
      async (request, reply) => reply.code(202).send(await service.testWebhook(workspaceOf(request), request.params.id, request.body)),
    );

    app.post(
      '/v1/agents/:id/test-function',
      {
        schema: {
          operationId: 'testAgentFunction',
          summary: 'Call one of the agent functions as a live call would (signed), and report its answer',
          tags,
          params: AgentParams,
          body: FunctionTestBody,
          response: { 200: FunctionTestResult },
        },
        config: write,
      },
      async (request) => service.testFunction(workspaceOf(request), request.params.id, request.body),
    );

    app.post(
      '/v1/agents/:id/chat',
      {
        schema: {
          operationId: 'chatWithAgent',
          summary: 'Send a text message to the agent; pass conversation_id back to continue the conversation',
          tags,
          params: AgentParams,
          body: ChatBody,
          response: { 200: ChatReply },
        },
        config: write,
      },
      async (request) => service.chat(workspaceOf(request), request.params.id, request.body),
    );
  };
}
