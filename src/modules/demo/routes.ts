import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DemoCall, DemoCallBody, DemoChatBody, DemoChatReply } from './schemas.ts';
import type { DemoService } from './service.ts';

// POST /v1/demo/call and /v1/demo/chat: public, in their own per-IP bucket (RATE_LIMIT_DEMO_PER_MIN,
// 3 a minute by default). The demo workspace and agent are made when the app is built.

const tags = ['public'];
const demoAccess = { access: { auth: 'public', limit: 'demo' } } as const;

/** `prepare`: makes the demo workspace and agent as the routes are registered (never throws). */
export function demoRoutes(service: DemoService, prepare: () => Promise<void>): FastifyPluginAsyncTypebox {
  return async (app) => {
    await prepare();

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
