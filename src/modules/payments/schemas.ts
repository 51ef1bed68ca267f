import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../platform/http/schemas.ts';
import { PAYMENT_STATUSES } from './tables.ts';

// Schemas of payments: a top-up's body and a payment as the API shows it.

export const Payment = Type.Object(
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
export const TopUpBody = Type.Object(
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
