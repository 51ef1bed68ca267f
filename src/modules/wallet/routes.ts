import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Selectable, sql } from 'kysely';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import type { WalletTransactionsTable, WalletsTable } from '../../platform/db/foundation-tables.ts';
import { invalidField, notFound } from '../../platform/errors.ts';
import { DateRangeQuery, dateRangeOf, daysOf } from '../../platform/http/date-range.ts';
import { ListOf } from '../../platform/http/schemas.ts';
import { microsToUsd, usdToMicros } from '../../platform/money.ts';
import { pageRequest, toPage } from '../../platform/pagination.ts';
import type { Platform } from '../../platform/platform.ts';
import { DEFAULT_RECHARGE_USD } from './repo.ts';
import { Pricing, TransactionsQuery, Usage, Wallet, WalletTransaction, WalletUpdate } from './schemas.ts';

// The wallet (GET/PATCH /v1/wallet), its ledger (GET /v1/wallet/transactions), what was spent
// (GET /v1/usage, by day, agent and kind) and the public price list (GET /v1/pricing).

const tags = ['wallet'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const admin = { access: { auth: 'workspace', scope: 'admin' } } as const;

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

export function walletRoutes(platform: Platform): FastifyPluginAsyncTypebox {
  const { db, clock, config } = platform;

  async function walletOf(workspaceId: string) {
    const row = await db.selectFrom('wallets').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
    if (!row) throw notFound('wallet');
    return row;
  }

  async function usage(workspaceId: string, range: { from: Date; to: Date }) {
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
      spent
        .innerJoin('calls', 'calls.id', 'wallet_transactions.reference_id')
        .select(['calls.agent_id', sql<number>`-sum(wallet_transactions.amount_micros)`.as('micros'), sql<number>`count(*)`.as('calls'), sql<number>`sum(calls.billed_seconds)`.as('seconds')])
        .groupBy('calls.agent_id')
        .execute(),
    ]);
    const perDay = new Map(byDay.map((r) => [r.day, Number(r.micros)]));
    return {
      from: range.from.toISOString(),
      to: range.to.toISOString(),
      currency: 'USD',
      total_usd: microsToUsd(byKind.reduce((sum, r) => sum + Number(r.micros), 0)),
      by_day: daysOf(range).map((date) => ({ date, amount_usd: microsToUsd(perDay.get(date) ?? 0) })),
      by_agent: byAgent
        .map((r) => ({ agent_id: r.agent_id, amount_usd: microsToUsd(Number(r.micros)), calls: Number(r.calls), billed_seconds: Number(r.seconds) }))
        .sort((a, b) => b.amount_usd - a.amount_usd),
      by_kind: byKind.map((r) => ({ kind: r.type as 'call' | 'voice_session' | 'phone_number', amount_usd: microsToUsd(Number(r.micros)), count: Number(r.count) })),
    };
  }

  return async (app) => {
    app.get('/v1/wallet', { schema: { operationId: 'getWallet', summary: 'The prepaid balance, threshold and auto-recharge settings', tags, response: { 200: Wallet } }, config: read }, async (request) =>
      presentWallet(await walletOf(workspaceOf(request).workspaceId)),
    );

    app.patch(
      '/v1/wallet',
      { schema: { operationId: 'updateWallet', summary: 'Set the low-balance threshold and auto-recharge (owner or admin)', tags, body: WalletUpdate, response: { 200: Wallet } }, config: admin },
      async (request) => {
        const workspaceId = workspaceOf(request).workspaceId;
        const current = await walletOf(workspaceId);
        const settings = { ...((current.auto_recharge ?? {}) as AutoRechargeSettings), ...(request.body.auto_recharge ?? {}) };
        if (settings.enabled && !settings.payment_method) throw invalidField('auto_recharge.payment_method', 'required to enable auto-recharge (the saved method it charges)');
        const set: Record<string, unknown> = { auto_recharge: JSON.stringify(settings), updated_at: clock.now() };
        if (request.body.threshold_usd !== undefined) set.threshold_micros = usdToMicros(request.body.threshold_usd);
        const row = await db.updateTable('wallets').set(set).where('workspace_id', '=', workspaceId).returningAll().executeTakeFirstOrThrow();
        return presentWallet(row);
      },
    );

    app.get(
      '/v1/wallet/transactions',
      { schema: { operationId: 'listWalletTransactions', summary: 'The ledger, newest first: every change of the balance', tags, querystring: TransactionsQuery, response: { 200: ListOf(WalletTransaction, 'WalletTransactionList') } }, config: read },
      async (request) => {
        const page = pageRequest(request.query);
        let query = db.selectFrom('wallet_transactions').selectAll().where('workspace_id', '=', workspaceOf(request).workspaceId);
        if (request.query.type) query = query.where('type', '=', request.query.type);
        if (page.after) query = query.where('id', '<', page.after);
        const rows = await query.orderBy('id', 'desc').limit(page.limit + 1).execute();
        return toPage(rows, page, (r) => r.id, presentTransaction);
      },
    );

    app.get(
      '/v1/usage',
      { schema: { operationId: 'getUsage', summary: 'What the workspace spent, by day, by agent and by kind', tags, querystring: DateRangeQuery('Spending'), response: { 200: Usage } }, config: read },
      async (request) => usage(workspaceOf(request).workspaceId, dateRangeOf(request.query, clock.now())),
    );

    app.get('/v1/pricing', { schema: { operationId: 'getPricing', summary: 'Current prices (public)', tags, response: { 200: Pricing } }, config: { access: { auth: 'public' } } }, async () => ({
      currency: 'USD',
      rates: {
        call_per_min_usd: config.pricing.callPerMinUsd,
        web_voice_per_min_usd: config.pricing.webVoicePerMinUsd,
        phone_number_monthly_usd: config.pricing.phoneNumberMonthlyUsd,
      },
    }));
  };
}
