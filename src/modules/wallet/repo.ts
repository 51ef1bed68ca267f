import { type Expression, type Selectable, sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';
import { microsToUsd } from '../../platform/money.ts';
import type { EventEmitter } from '../../platform/outbox/emit.ts';
import type { WalletTransactionsTable, WalletsTable } from '../../platform/db/foundation-tables.ts';

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
    /** Wallets whose auto-recharge is on, armed, and whose balance is below the threshold. */
    dueForRecharge(db: Executor, limit: number) {
      return db
        .selectFrom('wallets')
        .select(['workspace_id', 'auto_recharge'])
        .where('recharge_armed', '=', true)
        .where(sql<boolean>`balance_micros < threshold_micros`)
        .where(sql<boolean>`coalesce((auto_recharge->>'enabled')::boolean, false)`)
        .limit(limit)
        .execute();
    },
    /** Disarms the auto-recharge latch; true for the one caller that disarmed it. */
    async disarmRecharge(db: Executor, workspaceId: string): Promise<boolean> {
      const claimed = await db.updateTable('wallets').set({ recharge_armed: false }).where('workspace_id', '=', workspaceId).where('recharge_armed', '=', true).executeTakeFirst();
      return Number(claimed.numUpdatedRows) === 1;
    },
    find(db: Executor, workspaceId: string): Promise<Selectable<WalletsTable> | undefined> {
      return db.selectFrom('wallets').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
    },
    /** The threshold and auto-recharge settings (already merged and checked by the service). */
    updateSettings(db: Executor, workspaceId: string, set: { auto_recharge: string; threshold_micros?: number; updated_at: Date }) {
      return db.updateTable('wallets').set(set).where('workspace_id', '=', workspaceId).returningAll().executeTakeFirstOrThrow();
    },
    /** The ledger, newest first, `limit` rows after the `after` id (the caller reads one more to page). */
    listTransactions(db: Executor, workspaceId: string, options: { type?: WalletTransactionsTable['type']; after?: string | null; limit: number }) {
      let query = db.selectFrom('wallet_transactions').selectAll().where('workspace_id', '=', workspaceId);
      if (options.type) query = query.where('type', '=', options.type);
      if (options.after) query = query.where('id', '<', options.after);
      return query.orderBy('id', 'desc').limit(options.limit).execute();
    },
    /**
     * What was spent (calls, voice sessions, numbers) in [from, to): by UTC day, by kind, and by the
     * agent of each call (the calls module joins the call charges to their calls: `spendByAgent`).
     */
    async spending(db: Executor, workspaceId: string, range: { from: Date; to: Date }, spendByAgent: SpendByAgent) {
      const spent = db
        .selectFrom('wallet_transactions')
        .where('wallet_transactions.workspace_id', '=', workspaceId)
        .where('wallet_transactions.amount_micros', '<', 0)
        .where('wallet_transactions.type', 'in', ['call', 'voice_session', 'phone_number'])
        .where('wallet_transactions.created_at', '>=', range.from)
        .where('wallet_transactions.created_at', '<', range.to);
      const [byDay, byKind, byAgent] = await Promise.all([
        spent.select([sql<string>`to_char(wallet_transactions.created_at at time zone 'UTC', 'YYYY-MM-DD')`.as('day'), sql<number>`-sum(wallet_transactions.amount_micros)`.as('micros')]).groupBy(sql`1`).execute(),
        spent.select(['wallet_transactions.type', sql<number>`-sum(wallet_transactions.amount_micros)`.as('micros'), sql<number>`count(*)`.as('count')]).groupBy('wallet_transactions.type').execute(),
        spendByAgent(db, spent.select(['wallet_transactions.reference_id as call_id', 'wallet_transactions.amount_micros'])),
      ]);
      return { byDay, byKind, byAgent };
    },
  };
}

export type WalletRepo = ReturnType<typeof createWalletRepo>;

/**
 * The calls module's read of what charges spent per agent of their calls (calls/figures.ts): the
 * wallet reads no call row itself. `charges`: the ledger's query of call ids and amounts, run as a subquery.
 */
export type SpendByAgent = (
  db: Executor,
  charges: Expression<{ call_id: string | null; amount_micros: number }>,
) => Promise<Array<{ agent_id: string; micros: number; calls: number; seconds: number }>>;
