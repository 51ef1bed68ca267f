import { randomBytes } from 'node:crypto';
import type { ChargeRequest, ChargeResult, PaymentsProvider } from '../../ports/payments.ts';

// The sandbox payment provider (PAYMENTS_PROVIDER=sandbox, the default): no account anywhere.
// Stripe's test card names decide the outcome: `pm_card_visa` (the default) and any other method
// succeed at once; `pm_card_declined` and `pm_card_chargeDeclined` are declined. Nothing is ever
// settled later, so it has no webhook.

export const SANDBOX_DECLINED_METHODS = new Set(['pm_card_declined', 'pm_card_chargeDeclined']);

export function createSandboxPayments(): PaymentsProvider {
  return {
    name: 'sandbox',
    async charge(request: ChargeRequest): Promise<ChargeResult> {
      const providerRef = `sandbox_${randomBytes(12).toString('hex')}`;
      if (SANDBOX_DECLINED_METHODS.has(request.paymentMethod ?? 'pm_card_visa')) {
        return { status: 'failed', providerRef, reason: 'Your card was declined.' };
      }
      return { status: 'succeeded', providerRef };
    },
    verifyWebhook() {
      // The sandbox settles every charge when it is made; nothing arrives later.
      return null;
    },
  };
}
