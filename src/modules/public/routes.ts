import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Accepted, ContactBody, EventsAccepted, EventsBody, NewsletterBody, NewsletterState } from './schemas.ts';
import type { PublicService } from './service.ts';

// Public utility endpoints: no authentication, counted in the shared per-IP bucket of public
// routes (RATE_LIMIT_IP_PER_MIN). Small bodies get a body limit of their own (413 beyond it).

const tags = ['public'];
const publicAccess = { access: { auth: 'public', limit: 'ip' } } as const;

export function publicRoutes(service: PublicService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/contact',
      {
        schema: { operationId: 'sendContactMessage', summary: 'Contact form: the message is stored and mailed to the operator', tags, body: ContactBody, response: { 202: Accepted } },
        config: publicAccess,
        bodyLimit: 64 * 1024,
      },
      async (request, reply) => {
        await service.contact(request.body);
        return reply.code(202).send({ status: 'accepted' });
      },
    );

    app.post(
      '/v1/newsletter/subscribe',
      {
        schema: { operationId: 'subscribeNewsletter', summary: 'Subscribe an address to the newsletter (idempotent)', tags, body: NewsletterBody, response: { 200: NewsletterState } },
        config: publicAccess,
        bodyLimit: 4 * 1024,
      },
      async (request) => service.subscribe(request.body.email),
    );

    app.post(
      '/v1/newsletter/unsubscribe',
      {
        schema: {
          operationId: 'unsubscribeNewsletter',
          summary: 'Unsubscribe an address (idempotent; an unknown address is fine)',
          tags,
          body: NewsletterBody,
          response: { 200: NewsletterState },
        },
        config: publicAccess,
        bodyLimit: 4 * 1024,
      },
      async (request) => service.unsubscribe(request.body.email),
    );

    app.post(
      '/v1/events',
      {
        schema: { operationId: 'ingestEvents', summary: 'Client-side events: one, or a batch of up to 100', tags, body: EventsBody, response: { 202: EventsAccepted } },
        config: publicAccess,
      },
      async (request, reply) => reply.code(202).send({ accepted: await service.ingest(request.body) }),
    );
  };
}
