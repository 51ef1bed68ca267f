import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { IdParams, ListOf, ListQuery } from '../../platform/http/schemas.ts';
import { Payment, TopUpBody } from './schemas.ts';
import { type PaymentsService, presentPayment } from './service.ts';

// Top-ups and their history (POST /v1/payments/topup, GET /v1/payments/history, GET
// /v1/payments/{id}) and the payment provider's webhook (POST /v1/payments/webhook: public,
// verified by the provider's signature over the raw body; Stripe credits only through it).

const tags = ['payments'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const admin = { access: { auth: 'workspace', scope: 'admin' } } as const;

export function paymentsRoutes(service: PaymentsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/v1/payments/topup',
      {
        schema: {
          operationId: 'topUpWallet',
          summary:
            'Top up the wallet (owner or admin; Idempotency-Key makes a retry charge once). Sandbox: settled at once; Stripe: pending until its webhook (without payment_method: with a client_secret to confirm with Stripe.js)',
          tags,
          body: TopUpBody,
          response: { 201: Payment },
        },
        config: admin,
      },
      async (request, reply) => {
        const { payment, clientSecret } = await service.topUp(workspaceOf(request).workspaceId, request.body);
        request.auditResourceId = payment.id;
        return reply.code(201).send(presentPayment(payment, clientSecret));
      },
    );

    app.get(
      '/v1/payments/history',
      { schema: { operationId: 'listPayments', summary: 'Payments, newest first (failed ones included)', tags, querystring: ListQuery, response: { 200: ListOf(Payment, 'PaymentList') } }, config: read },
      async (request) => service.history(workspaceOf(request).workspaceId, request.query),
    );

    app.get(
      '/v1/payments/:id',
      { schema: { operationId: 'getPayment', summary: 'One payment', tags, params: IdParams('Payment id (pay_…)'), response: { 200: Payment } }, config: read },
      async (request) => presentPayment(await service.get(workspaceOf(request).workspaceId, request.params.id)),
    );

    // The provider's webhook reads the body as the exact bytes signed: its own JSON parser here only.
    await app.register(async (scoped) => {
      scoped.removeContentTypeParser('application/json');
      scoped.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: 256 * 1024 }, (_request, body, done) => done(null, body));
      scoped.post(
        '/v1/payments/webhook',
        {
          schema: {
            operationId: 'paymentsWebhook',
            summary: "The payment provider's webhook (Stripe events, verified with Stripe-Signature); each event credits at most once",
            tags,
            headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String({ maxLength: 1024 })) }),
            response: { 200: Type.Object({ received: Type.Boolean(), result: Type.String({ description: 'applied, duplicate, unknown_payment or ignored (an event type that settles nothing, or a card declined while the customer confirms in the browser: they may try another)' }) }) },
          },
          config: { access: { auth: 'public', limit: 'none' } },
        },
        async (request) => {
          const signature = request.headers['stripe-signature'];
          return service.receiveWebhook(Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0), typeof signature === 'string' ? signature : undefined);
        },
      );
    });
  };
}
