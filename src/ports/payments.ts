// The payments module's port to a payment provider (sandbox now; Stripe in src/providers/payments/).
// Amounts are integer cents of USD. A provider never credits the wallet itself: the module does,
// once, when a charge succeeds (sandbox: at once; Stripe: only on its verified webhook event).

export interface ChargeRequest {
  /** Our payment id (`pay_…`), carried to the provider (Stripe: PaymentIntent metadata.payment_id). */
  paymentId: string;
  workspaceId: string;
  amountCents: number;
  /**
   * A payment method id (`pm_card_visa`, `pm_…`). Absent: the sandbox charges its default card;
   * Stripe creates the PaymentIntent unconfirmed, for the customer to confirm with Stripe.js.
   */
  paymentMethod?: string;
  /** Charging a saved method with nobody present (auto-recharge). */
  offSession?: boolean;
  /** The provider's customer of this workspace, when one is known (Stripe `cus_…`). */
  customerRef?: string;
  /** Makes a retried request charge once (Stripe Idempotency-Key). */
  idempotencyKey: string;
}

export type ChargeResult =
  | { status: 'succeeded'; providerRef: string }
  | { status: 'failed'; providerRef: string | null; reason: string }
  /**
   * Settled later by a verified webhook event (Stripe), possibly after the customer confirms in
   * their browser with `clientSecret` (Stripe.js). The client secret is handed to the caller once
   * and never stored.
   */
  | { status: 'pending'; providerRef: string; clientSecret?: string };

/** A verified provider event about one of our payments. */
export interface SettlementEvent {
  /** The provider's event id (Stripe `evt_…`): each is applied at most once. */
  eventId: string;
  outcome: 'succeeded' | 'failed';
  /** The provider's object (Stripe PaymentIntent `pi_…`). */
  providerRef: string;
  /** Our payment id, when the provider carried it (metadata). */
  paymentId: string | null;
  amountCents: number;
  reason?: string;
}

export interface PaymentsProvider {
  readonly name: 'sandbox' | 'stripe';
  charge(request: ChargeRequest): Promise<ChargeResult>;
  /**
   * Verifies a webhook request (the raw body as received and its signature header) and answers the
   * settlement it carries, or null for an event type that settles nothing. Throws
   * `InvalidWebhookSignature` when the signature does not match.
   */
  verifyWebhook(rawBody: Buffer, signatureHeader: string | undefined): SettlementEvent | null;
}

export class InvalidWebhookSignature extends Error {}
