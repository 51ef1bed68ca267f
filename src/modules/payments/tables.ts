import type { ColumnType } from 'kysely';
import type { Timestamp } from '../../platform/db/foundation-tables.ts';

// Tables of payments (migration 0008): wallet top-ups and the provider events already applied.

export const PAYMENT_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export interface PaymentsTable {
  id: string;
  workspace_id: string;
  amount_micros: ColumnType<number, number, number>;
  currency: ColumnType<string, string | undefined, string>;
  status: PaymentStatus;
  /** `sandbox` or `stripe`. */
  provider: string;
  /** The provider's object (Stripe PaymentIntent `pi_…`). */
  provider_ref: string | null;
  payment_method: string | null;
  failure_reason: string | null;
  checkout_url: string | null;
  /** `manual` (POST /v1/payments/topup) or `auto_recharge`. */
  trigger: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
  settled_at: Timestamp | null;
}

export interface PaymentProviderEventsTable {
  /** The provider's event id, prefixed by the provider (`stripe:evt_…`). */
  event_id: string;
  payment_id: string | null;
  outcome: string;
  received_at: Timestamp;
}

export interface PaymentTables {
  payments: PaymentsTable;
  payment_provider_events: PaymentProviderEventsTable;
}
