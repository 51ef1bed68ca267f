import type { Selectable } from 'kysely';
import type { WorkspaceContext } from '../../platform/auth/access.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import type { Executor } from '../../platform/db/schema.ts';
import type { WalletTransactionsTable, WalletsTable } from '../../platform/db/foundation-tables.ts';
import { invalidField, notFound } from '../../platform/errors.ts';
import { dateRangeOf, perDayOf } from '../../platform/http/date-range.ts';
import { microsToUsd, usdToMicros } from '../../platform/money.ts';
import { pageRequest, toPage } from '../../platform/pagination.ts';
import { DEFAULT_RECHARGE_USD, type SpendByAgent, type WalletRepo } from './repo.ts';
import type { TransactionsQuery, WalletUpdate } from './schemas.ts';

// The wallet as its API shows it: the balance and its settings, the ledger, what was spent, the
// price list. Balance changes are the repo's `applyEntry` (calls, sessions, numbers, payments).

type AutoRechargeSettings = { enabled?: boolean; amount_usd?: number; payment_method?: string | null };

function presentWallet(row: Selectable<WalletsTable>) {
  const settings = (row.auto_recharge ?? {}) as AutoRechargeSettings;
  return {
    balance_usd: microsToUsd(Number(row.balance_micros)),
    threshold_usd: microsToUsd(Number(row.threshold_micros)),
    currency: row.currency,
    auto_recharge: { enabled: settings.enabled === true, amount_usd: settings.amount_usd ?? DEFAULT_RECHARGE_USD, payment_method: settings.payment_method ?? null },
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

const presentTransaction = (row: Selectable<WalletTransactionsTable>) => ({
  id: row.id,
  type: row.type,
  amount_usd: microsToUsd(Number(row.amount_micros)),
  balance_after_usd: microsToUsd(Number(row.balance_after_micros)),
  description: row.description,
  reference_id: row.reference_id,
  created_at: new Date(row.created_at).toISOString(),
});

export interface WalletServiceDeps {
  db: Executor;
  clock: Clock;
  config: Pick<Config, 'pricing'>;
  wallet: WalletRepo;
  /** The calls module's spend per agent of the call charges (the calls table is its own). */
  spendByAgent: SpendByAgent;
}

export function createWalletService({ db, clock, config, wallet, spendByAgent }: WalletServiceDeps) {
  async function walletOf(workspaceId: string) {
    const row = await wallet.find(db, workspaceId);
    if (!row) throw notFound('wallet');
    return row;
  }

  return {
    async get(ctx: WorkspaceContext) {
      return presentWallet(await walletOf(ctx.workspaceId));
    },

    async update(ctx: WorkspaceContext, body: WalletUpdate) {
      const current = await walletOf(ctx.workspaceId);
      const settings = { ...((current.auto_recharge ?? {}) as AutoRechargeSettings), ...(body.auto_recharge ?? {}) };
      if (settings.enabled && !settings.payment_method) throw invalidField('auto_recharge.payment_method', 'required to enable auto-recharge (the saved method it charges)');
      const set = {
        auto_recharge: JSON.stringify(settings),
        updated_at: clock.now(),
        ...(body.threshold_usd !== undefined ? { threshold_micros: usdToMicros(body.threshold_usd) } : {}),
      };
      return presentWallet(await wallet.updateSettings(db, ctx.workspaceId, set));
    },

    async transactions(ctx: WorkspaceContext, query: TransactionsQuery) {
      const page = pageRequest(query);
      const rows = await wallet.listTransactions(db, ctx.workspaceId, { type: query.type, after: page.after, limit: page.limit + 1 });
      return toPage(rows, page, (r) => r.id, presentTransaction);
    },

    async usage(ctx: WorkspaceContext, query: { from?: string; to?: string }) {
      const range = dateRangeOf(query, clock.now());
      const { byDay, byKind, byAgent } = await wallet.spending(db, ctx.workspaceId, range, spendByAgent);
      return {
        from: range.from.toISOString(),
        to: range.to.toISOString(),
        currency: 'USD',
        total_usd: microsToUsd(byKind.reduce((sum, r) => sum + Number(r.micros), 0)),
        by_day: perDayOf(range, byDay, (row, date) => ({ date, amount_usd: microsToUsd(Number(row?.micros ?? 0)) })),
        by_agent: byAgent
          .map((r) => ({ agent_id: r.agent_id, amount_usd: microsToUsd(Number(r.micros)), calls: Number(r.calls), billed_seconds: Number(r.seconds) }))
          .sort((a, b) => b.amount_usd - a.amount_usd),
        by_kind: byKind.map((r) => ({ kind: r.type as 'call' | 'voice_session' | 'phone_number', amount_usd: microsToUsd(Number(r.micros)), count: Number(r.count) })),
      };
    },

    pricing() {
      return {
        currency: 'USD',
        rates: {
          call_per_min_usd: config.pricing.callPerMinUsd,
          web_voice_per_min_usd: config.pricing.webVoicePerMinUsd,
          phone_number_monthly_usd: config.pricing.phoneNumberMonthlyUsd,
        },
      };
    },
  };
}

export type WalletService = ReturnType<typeof createWalletService>;
