import { sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';
import type { WalletTransactionsTable } from '../../platform/db/foundation-tables.ts';

// The wallet and its ledger. Every balance change is one ledger row written in the same
// statement sequence as the balance update, so the balance always equals the ledger sum.

export function createWalletRepo() {
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
        .returning(['balance_micros'])
        .executeTakeFirstOrThrow();
      return db
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
    },
  };
}

export type WalletRepo = ReturnType<typeof createWalletRepo>;
