import { type Static, Type } from 'typebox';
import { Nullable, Timestamp } from '../../platform/http/schemas.ts';

// Schemas of the wallet, its ledger, usage and pricing (DESIGN "Wallet and payments").

const Usd = (description?: string) => Type.Number({ description });

export const AutoRecharge = Type.Object(
  {
    enabled: Type.Boolean(),
    amount_usd: Type.Number({ description: 'What each recharge tops up' }),
    payment_method: Nullable(Type.String({ description: 'The saved method charged off session (sandbox: pm_card_visa …; Stripe: pm_…)' })),
  },
  { title: 'AutoRecharge' },
);

export const Wallet = Type.Object(
  {
    balance_usd: Usd('Equals the sum of the ledger'),
    threshold_usd: Usd('Below it: wallet.low_balance (at most once per 24 h) and, when enabled, auto-recharge'),
    currency: Type.String({ examples: ['USD'] }),
    auto_recharge: AutoRecharge,
    updated_at: Timestamp,
  },
  { title: 'Wallet' },
);

export const WalletUpdate = Type.Object(
  {
    threshold_usd: Type.Optional(Type.Number({ minimum: 0, maximum: 10_000 })),
    auto_recharge: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          amount_usd: Type.Optional(Type.Number({ minimum: 5, maximum: 10_000 })),
          payment_method: Type.Optional(Nullable(Type.String({ pattern: '^pm_[A-Za-z0-9_]{1,200}$', maxLength: 203 }))),
        },
        { additionalProperties: false, minProperties: 1 },
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1, title: 'WalletUpdate', description: 'auto_recharge is merged; enabling it needs a payment_method' },
);

export const TRANSACTION_TYPES = ['topup', 'call', 'voice_session', 'phone_number', 'adjustment'] as const;

export const WalletTransaction = Type.Object(
  {
    id: Type.String({ description: 'txn_…' }),
    type: Type.Enum(TRANSACTION_TYPES),
    amount_usd: Usd('Signed: credits positive, debits negative'),
    balance_after_usd: Usd(),
    description: Nullable(Type.String()),
    reference_id: Nullable(Type.String({ description: 'The payment, call or phone number it is for' })),
    created_at: Timestamp,
  },
  { title: 'WalletTransaction' },
);

export const TransactionsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    type: Type.Optional(Type.Enum(TRANSACTION_TYPES)),
  },
  { additionalProperties: false },
);

export const USAGE_KINDS = ['call', 'voice_session', 'phone_number'] as const;

export const Usage = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    currency: Type.String(),
    total_usd: Usd('Everything spent in the range'),
    by_day: Type.Array(Type.Object({ date: Type.String({ examples: ['2026-11-23'] }), amount_usd: Usd() }), { description: 'Every UTC day of the range' }),
    by_agent: Type.Array(Type.Object({ agent_id: Type.String(), amount_usd: Usd(), calls: Type.Integer(), billed_seconds: Type.Integer() }), {
      description: 'Calls and voice sessions by agent, most spent first',
    }),
    by_kind: Type.Array(Type.Object({ kind: Type.Enum(USAGE_KINDS), amount_usd: Usd(), count: Type.Integer() })),
  },
  { title: 'Usage' },
);

export const Pricing = Type.Object(
  {
    currency: Type.String({ examples: ['USD'] }),
    rates: Type.Object({
      call_per_min_usd: Usd('Phone calls, per minute, billed per started second'),
      web_voice_per_min_usd: Usd('Voice sessions and web calls, per minute, billed per started second'),
      phone_number_monthly_usd: Usd('Each phone number, per month'),
    }),
  },
  { title: 'Pricing' },
);

export type WalletUpdate = Static<typeof WalletUpdate>;
export type TransactionsQuery = Static<typeof TransactionsQuery>;
