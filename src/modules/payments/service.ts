import type { Selectable } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Executor } from '../../platform/db/schema.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { microsToUsd, usdToMicros } from '../../platform/money.ts';
import type { EventEmitter } from '../../platform/outbox/emit.ts';
import { createWalletRepo, DEFAULT_RECHARGE_USD } from '../wallet/repo.ts';
import { pageRequest, toPage } from '../../platform/pagination.ts';
import { type ChargeResult, InvalidWebhookSignature, type PaymentsProvider, type SettlementEvent } from '../../ports/payments.ts';
import type { PaymentsTable } from './tables.ts';

// Top-ups: a payment row first (pending), the provider's charge outside any transaction, then
// one short transaction that settles the payment and credits the wallet — at most once per
// payment, whichever of the charge's answer or the provider's webhook (Stripe) settles it first.
// `payment.succeeded` goes to the tenant webhook in that same transaction.

export type PaymentRow = Selectable<PaymentsTable>;
/** What a provider event did: settled a payment, nothing (seen before, not ours, or nothing to settle). */
export type SettlementResult = 'applied' | 'duplicate' | 'unknown_payment' | 'ignored';

export interface PaymentsDeps {
  db: Database;
  clock: Clock;
  events: EventEmitter;
  provider: PaymentsProvider;
}

/** `clientSecret`: only on the answer of the top-up that created it (never stored nor listed). */
export function presentPayment(row: PaymentRow, clientSecret: string | null = null) {
  return {
    id: row.id,
    status: row.status,
    amount_usd: microsToUsd(Number(row.amount_micros)),
    currency: row.currency,
    provider: row.provider,
    payment_method: row.payment_method,
    trigger: row.trigger as 'manual' | 'auto_recharge',
    checkout_url: row.checkout_url,
    failure_reason: row.failure_reason,
    created_at: new Date(row.created_at).toISOString(),
    settled_at: row.settled_at ? new Date(row.settled_at).toISOString() : null,
    client_secret: clientSecret,
  };
}

/** A payment just charged, and the client secret the customer confirms it with (Stripe.js), if any. */
export interface ChargedPayment {
  payment: PaymentRow;
  clientSecret: string | null;
}

/** A top-up the customer confirms in their browser (Stripe.js): made with no payment method, by hand. */
const awaitsCustomer = (payment: Pick<PaymentRow, 'payment_method' | 'trigger'>) => payment.payment_method === null && payment.trigger === 'manual';

export function createPaymentsService(deps: PaymentsDeps) {
  const { db, clock, events, provider } = deps;
  // No emitter: a payment only credits, and wallet.low_balance follows a debit crossing below.
  const wallet = createWalletRepo();

  /** pending → succeeded (credit + payment.succeeded) or failed, once; nothing when already settled. */
  async function settle(tx: Executor, paymentId: string, outcome: { status: 'succeeded' } | { status: 'failed'; reason: string }): Promise<void> {
    const now = clock.now();
    const settled = await tx
      .updateTable('payments')
      .set({ status: outcome.status, failure_reason: outcome.status === 'failed' ? outcome.reason.slice(0, 500) : null, settled_at: now, updated_at: now })
      .where('id', '=', paymentId)
      .where('status', '=', 'pending')
      .returningAll()
      .executeTakeFirst();
    if (!settled || outcome.status !== 'succeeded') return;
    const amount = Number(settled.amount_micros);
    const entry = await wallet.applyEntry(tx, {
      workspaceId: settled.workspace_id,
      type: 'topup',
      amountMicros: amount,
      description: settled.trigger === 'auto_recharge' ? 'auto-recharge' : 'top-up',
      referenceId: settled.id,
      now,
    });
    await events.emit(tx, {
      workspaceId: settled.workspace_id,
      type: 'payment.succeeded',
      data: { payment_id: settled.id, amount_usd: microsToUsd(amount), currency: settled.currency, balance_usd: microsToUsd(Number(entry.balance_after_micros)) },
      tenantOnly: true,
    });
  }

  async function applyCharge(payment: PaymentRow, result: ChargeResult): Promise<ChargedPayment> {
    await db.transaction().execute(async (tx) => {
      // The provider's object (null when nothing reached the provider, as the row already holds).
      await tx.updateTable('payments').set({ provider_ref: result.providerRef, updated_at: clock.now() }).where('id', '=', payment.id).execute();
      if (result.status === 'pending') return;
      await settle(tx, payment.id, result.status === 'succeeded' ? { status: 'succeeded' } : { status: 'failed', reason: result.reason });
    });
    const row = await db.selectFrom('payments').selectAll().where('id', '=', payment.id).executeTakeFirstOrThrow();
    return { payment: row, clientSecret: result.status === 'pending' ? (result.clientSecret ?? null) : null };
  }

  /** Creates a payment and charges it: settled now (sandbox) or pending until the provider's webhook (Stripe). */
  async function charge(workspaceId: string, input: { amountUsd: number; paymentMethod?: string; trigger: 'manual' | 'auto_recharge'; offSession?: boolean }): Promise<ChargedPayment> {
    const now = clock.now();
    const payment = await db
      .insertInto('payments')
      .values({
        id: newId('pay'),
        workspace_id: workspaceId,
        amount_micros: usdToMicros(input.amountUsd),
        status: 'pending',
        provider: provider.name,
        payment_method: input.paymentMethod ?? null,
        trigger: input.trigger,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    let result: ChargeResult;
    try {
      result = await provider.charge({
        paymentId: payment.id,
        workspaceId,
        amountCents: Math.round(input.amountUsd * 100),
        paymentMethod: input.paymentMethod,
        offSession: input.offSession,
        idempotencyKey: payment.id,
      });
    } catch (error) {
      // The provider could not be reached or refused the request: the payment failed, nothing was charged.
      result = { status: 'failed', providerRef: null, reason: `the payment provider failed: ${error instanceof Error ? error.message : String(error)}` };
    }
    return applyCharge(payment, result);
  }

  /**
   * Auto-recharge: every wallet with it enabled whose balance is below its threshold and whose
   * latch is armed is disarmed (one claimer wins) and charged through its saved method, off
   * session. The latch is armed again when the balance is back at the threshold: once per crossing.
   */
  async function rechargeDue(limit = 50): Promise<number> {
    const due = await wallet.dueForRecharge(db, limit);
    let charged = 0;
    for (const row of due) {
      if (!(await wallet.disarmRecharge(db, row.workspace_id))) continue;
      const settings = row.auto_recharge as { amount_usd?: number; payment_method?: string };
      await charge(row.workspace_id, { amountUsd: settings.amount_usd ?? DEFAULT_RECHARGE_USD, paymentMethod: settings.payment_method, trigger: 'auto_recharge', offSession: true });
      charged++;
    }
    return charged;
  }

  /**
   * A verified provider event: applied at most once per event id (a replay, a duplicate or an
   * event arriving after another already settled the payment changes nothing).
   */
  async function applySettlement(event: SettlementEvent): Promise<SettlementResult> {
    return db.transaction().execute(async (tx) => {
      const recorded = await tx
        .insertInto('payment_provider_events')
        .values({ event_id: `${provider.name}:${event.eventId}`, payment_id: event.paymentId, outcome: event.outcome, received_at: clock.now() })
        .onConflict((oc) => oc.column('event_id').doNothing())
        .returning('event_id')
        .executeTakeFirst();
      if (!recorded) return 'duplicate';
      let query = tx.selectFrom('payments').select(['id', 'status', 'payment_method', 'trigger']).where('provider', '=', provider.name);
      query = event.paymentId ? query.where('id', '=', event.paymentId) : query.where('provider_ref', '=', event.providerRef);
      const payment = await query.executeTakeFirst();
      if (!payment) return 'unknown_payment';
      await tx.updateTable('payments').set({ provider_ref: event.providerRef }).where('id', '=', payment.id).where('provider_ref', 'is', null).execute();
      // A card declined while the customer confirms in the browser: the PaymentIntent waits for
      // another card (Stripe sends payment_failed for each declined attempt), so the payment stays
      // pending until one succeeds.
      if (event.outcome === 'failed' && payment.status === 'pending' && awaitsCustomer(payment)) return 'ignored';
      await settle(tx, payment.id, event.outcome === 'succeeded' ? { status: 'succeeded' } : { status: 'failed', reason: event.reason ?? 'the payment failed' });
      return 'applied';
    });
  }

  return {
    charge,
    rechargeDue,

    /**
     * POST /v1/payments/topup: a declined charge is 402 payment_failed, with the failed payment kept
     * in the history. On Stripe without a payment method: pending, with the client secret to confirm.
     */
    async topUp(workspaceId: string, body: { amount_usd: number; payment_method?: string }): Promise<ChargedPayment> {
      const charged = await charge(workspaceId, { amountUsd: body.amount_usd, paymentMethod: body.payment_method, trigger: 'manual' });
      const { payment } = charged;
      if (payment.status === 'failed') {
        throw new AppError('payment_failed', `${payment.failure_reason ?? 'The payment failed.'} (payment ${payment.id}, kept in the history)`);
      }
      return charged;
    },

    async get(workspaceId: string, id: string): Promise<PaymentRow> {
      const row = await db.selectFrom('payments').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      if (!row) throw notFound('payment');
      return row;
    },

    applySettlement,

    /** GET /v1/payments/history: newest first, by cursor (failed payments included). */
    async history(workspaceId: string, query: { limit?: number; cursor?: string }) {
      const page = pageRequest(query);
      let rows = db.selectFrom('payments').selectAll().where('workspace_id', '=', workspaceId);
      if (page.after) rows = rows.where('id', '<', page.after);
      return toPage(await rows.orderBy('id', 'desc').limit(page.limit + 1).execute(), page, (r) => r.id, (row) => presentPayment(row));
    },

    /** POST /v1/payments/webhook: the exact bytes verified by the provider's signature, then applied once. */
    async receiveWebhook(raw: Buffer, signature: string | undefined): Promise<{ received: true; result: SettlementResult }> {
      let event: SettlementEvent | null;
      try {
        event = provider.verifyWebhook(raw, signature);
      } catch (error) {
        if (error instanceof InvalidWebhookSignature) throw new AppError('invalid_webhook_signature', 'Stripe-Signature does not match this request');
        throw error;
      }
      return { received: true, result: event ? await applySettlement(event) : 'ignored' };
    },
  };
}

export type PaymentsService = ReturnType<typeof createPaymentsService>;
