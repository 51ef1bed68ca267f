import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { AppError } from '../../platform/errors.ts';
import { IdParams, ListOf, ListQuery, Nullable, Timestamp } from '../../platform/http/schemas.ts';
import { pageRequest, toPage } from '../../platform/pagination.ts';
import type { Platform } from '../../platform/platform.ts';
import { InvalidWebhookSignature } from '../../ports/payments.ts';
import { PAYMENT_STATUSES } from './tables.ts';
import { type PaymentsService, presentPayment } from './service.ts';

// Top-ups and their history (POST /v1/payments/topup, GET /v1/payments/history, GET
// /v1/payments/{id}) and the payment provider's webhook (POST /v1/payments/webhook: public,
// verified by the provider's signature over the raw body; Stripe credits only through it).

const tags = ['payments'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const admin = { access: { auth: 'workspace', scope: 'admin' } } as const;

const Payment = Type.Object(
  {
    id: Type.String({ description: 'pay_…' }),
    status: Type.Enum(PAYMENT_STATUSES),
    amount_usd: Type.Number(),
    currency: Type.String(),
    provider: Type.String({ description: 'sandbox or stripe' }),
    payment_method: Nullable(Type.String()),
    trigger: Type.Enum(['manual', 'auto_recharge']),
    checkout_url: Nullable(Type.String({ description: 'Where the customer completes the payment, when the provider needs them to' })),
    failure_reason: Nullable(Type.String()),
    created_at: Timestamp,
    settled_at: Nullable(Timestamp),
    client_secret: Nullable(
      Type.String({
        description:
          "Stripe, only in the answer of a top-up without payment_method: the PaymentIntent's client secret, to confirm it in the customer's browser with Stripe.js (stripe.confirmPayment). Never stored by the platform; null everywhere else",
      }),
    ),
  },
  { title: 'Payment' },
);
const TopUpBody = Type.Object(
  {
    amount_usd: Type.Number({ minimum: 5, maximum: 10_000 }),
    payment_method: Type.Optional(
      Type.String({
        pattern: '^pm_[A-Za-z0-9_]{1,200}$',
        maxLength: 203,
        description: 'Sandbox: pm_card_visa (default) succeeds, pm_card_declined fails. Stripe: charged at once; without it the payment is pending with a client_secret to confirm with Stripe.js',
      }),
    ),
  },
  { additionalProperties: false, title: 'TopUp' },
);

export function paymentsRoutes(platform: Platform, service: PaymentsService): FastifyPluginAsyncTypebox {
  const { db } = platform;
  const provider = platform.providers.payments;
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
      async (request) => {
        const page = pageRequest(request.query);
        let query = db.selectFrom('payments').selectAll().where('workspace_id', '=', workspaceOf(request).workspaceId);
        if (page.after) query = query.where('id', '<', page.after);
        const rows = await query.orderBy('id', 'desc').limit(page.limit + 1).execute();
        return toPage(rows, page, (r) => r.id, (row) => presentPayment(row));
      },
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
          const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
          let event: ReturnType<typeof provider.verifyWebhook>;
          try {
            const signature = request.headers['stripe-signature'];
            event = provider.verifyWebhook(raw, typeof signature === 'string' ? signature : undefined);
          } catch (error) {
            if (error instanceof InvalidWebhookSignature) throw new AppError('invalid_webhook_signature', 'Stripe-Signature does not match this request');
            throw error;
          }
          if (!event) return { received: true, result: 'ignored' };
          return { received: true, result: await service.applySettlement(event) };
        },
      );
    });
  };
}
