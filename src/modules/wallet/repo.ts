import { sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';
import { microsToUsd } from '../../platform/money.ts';
import type { EventEmitter } from '../../platform/outbox/emit.ts';
import type { WalletTransactionsTable } from '../../platform/db/foundation-tables.ts';

// The wallet and its ledger. Every balance change is one ledger row written in the same
// statement sequence as the balance update, so the balance always equals the ledger sum. A debit
// that takes the balance below the threshold sends `wallet.low_balance` (at most once per 24 h)
// in the same transaction; the balance back at the threshold arms auto-recharge again.

const LOW_BALANCE_EVERY_MS = 24 * 3600 * 1000;

/** What auto-recharge tops up when the wallet's settings name no amount. */
export const DEFAULT_RECHARGE_USD = 20;

export interface WalletRepoDeps {
  /** Emits wallet.low_balance; without it (the signup credit, tests) no event is sent. */
  events?: EventEmitter;
}

export function createWalletRepo(deps: WalletRepoDeps = {}) {
  return {
    async create(db: Executor, row: { workspaceId: string; now: Date }) {
      await db
        .insertInto('wallets')
        .values({ workspace_id: row.workspaceId, auto_recharge: JSON.stringify({ enabled: false }), created_at: row.now, updated_at: row.now })
        .execute();
    },
    /** Applies a signed amount and records it; call inside a transaction. Returns the ledger row. */
    async applyEntry(
      db: Executor,
      entry: { workspaceId: string; type: WalletTransactionsTable['type']; amountMicros: number; description: string | null; referenceId?: string | null; now: Date },
    ) {
      const wallet = await db
        .updateTable('wallets')
        .set({ balance_micros: sql`balance_micros + ${entry.amountMicros}`, updated_at: entry.now })
        .where('workspace_id', '=', entry.workspaceId)
        .returning(['balance_micros', 'threshold_micros', 'low_balance_notified_at', 'recharge_armed'])
        .executeTakeFirstOrThrow();
      const transaction = await db
        .insertInto('wallet_transactions')
        .values({
          id: newId('txn'),
          workspace_id: entry.workspaceId,
          type: entry.type,
          amount_micros: entry.amountMicros,
          balance_after_micros: wallet.balance_micros,
          description: entry.description,
          reference_id: entry.referenceId ?? null,
          created_at: entry.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const after = Number(wallet.balance_micros);
      const before = after - entry.amountMicros;
      const threshold = Number(wallet.threshold_micros);
      if (after >= threshold && !wallet.recharge_armed) {
        await db.updateTable('wallets').set({ recharge_armed: true }).where('workspace_id', '=', entry.workspaceId).execute();
      }
      const crossedDown = entry.amountMicros < 0 && before >= threshold && after < threshold;
      const notifiedAt = wallet.low_balance_notified_at ? new Date(wallet.low_balance_notified_at).getTime() : null;
      if (crossedDown && deps.events && (notifiedAt === null || entry.now.getTime() - notifiedAt >= LOW_BALANCE_EVERY_MS)) {
        // Claimed in the row itself, so two racing debits notify once.
        const claimed = await db
          .updateTable('wallets')
          .set({ low_balance_notified_at: entry.now })
          .where('workspace_id', '=', entry.workspaceId)
          .where((eb) => eb.or([eb('low_balance_notified_at', 'is', null), eb('low_balance_notified_at', '<=', new Date(entry.now.getTime() - LOW_BALANCE_EVERY_MS))]))
          .executeTakeFirst();
        if (Number(claimed.numUpdatedRows) === 1) {
          await deps.events.emit(db, {
            workspaceId: entry.workspaceId,
            type: 'wallet.low_balance',
            data: { balance_usd: microsToUsd(after), threshold_usd: microsToUsd(threshold) },
            tenantOnly: true,
          });
        }
      }
      return transaction;
    },
  };
}

export type WalletRepo = ReturnType<typeof createWalletRepo>;
