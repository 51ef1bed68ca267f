import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createDialogueEngine } from '../../engine/index.ts';
import type { Platform } from '../../platform/platform.ts';
import { createFunctionCaller } from '../agents/functions.ts';
import type { CallsModule } from '../calls/module.ts';
import { knowledgeOf } from '../knowledge-base/knowledge.ts';
import { bootstrapDemo } from './bootstrap.ts';
import { DemoCall, DemoCallBody, DemoChatBody, DemoChatReply } from './schemas.ts';
import { createDemoService } from './service.ts';

// POST /v1/demo/call and /v1/demo/chat: public, in their own per-IP bucket (RATE_LIMIT_DEMO_PER_MIN,
// 3 a minute by default). The demo workspace and agent are made when the app is built.

const tags = ['public'];
const demoAccess = { access: { auth: 'public', limit: 'demo' } } as const;

export function demoRoutes(platform: Platform, calls: CallsModule): FastifyPluginAsyncTypebox {
  const { db, clock, config } = platform;
  const knowledge = knowledgeOf(platform).search;
  const functions = createFunctionCaller({ outbound: platform.outbound, clock });
  const bootstrap = () => bootstrapDemo({ db, clock, config });
  const service = createDemoService({
    db,
    calls: calls.service,
    telephony: platform.providers.telephony,
    bootstrap,
    engineFor: (agent) =>
      createDialogueEngine({ llm: platform.providers.llmFor(agent.llm), knowledge, functions: functions.invokerFor({ agentId: agent.id, secret: agent.webhook_secret }) }),
  });

  return async (app) => {
    // Not fatal: without a database now the demo is made on its first request instead.
    await bootstrap().catch((err: unknown) => platform.logger.error({ err }, 'demo bootstrap failed; it is retried on the first demo request'));

    app.post(
      '/v1/demo/call',
      {
        schema: {
          operationId: 'placeDemoCall',
          summary: 'Call a phone number with the demo agent (simulated unless a telephony provider is configured; at most 120 s)',
          tags,
          body: DemoCallBody,
          response: { 202: DemoCall },
        },
        config: demoAccess,
        bodyLimit: 4 * 1024,
      },
      async (request, reply) => reply.code(202).send(await service.call(request.body.phone)),
    );

    app.post(
      '/v1/demo/chat',
      {
        schema: { operationId: 'demoChat', summary: 'One chat turn with the demo agent (stateless)', tags, body: DemoChatBody, response: { 200: DemoChatReply } },
        config: demoAccess,
        bodyLimit: 16 * 1024,
      },
      async (request) => service.chat(request.body.message),
    );
  };
}
