import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { DateRangeQuery } from '../../platform/http/date-range.ts';
import { ListOf } from '../../platform/http/schemas.ts';
import { Pricing, TransactionsQuery, Usage, Wallet, WalletTransaction, WalletUpdate } from './schemas.ts';
import type { WalletService } from './service.ts';

// The wallet (GET/PATCH /v1/wallet), its ledger (GET /v1/wallet/transactions), what was spent
// (GET /v1/usage, by day, agent and kind) and the public price list (GET /v1/pricing).

const tags = ['wallet'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const admin = { access: { auth: 'workspace', scope: 'admin' } } as const;

export function walletRoutes(service: WalletService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/wallet', { schema: { operationId: 'getWallet', summary: 'The prepaid balance, threshold and auto-recharge settings', tags, response: { 200: Wallet } }, config: read }, async (request) =>
      service.get(workspaceOf(request)),
    );

    app.patch(
      '/v1/wallet',
      { schema: { operationId: 'updateWallet', summary: 'Set the low-balance threshold and auto-recharge (owner or admin)', tags, body: WalletUpdate, response: { 200: Wallet } }, config: admin },
      async (request) => service.update(workspaceOf(request), request.body),
    );

    app.get(
      '/v1/wallet/transactions',
      { schema: { operationId: 'listWalletTransactions', summary: 'The ledger, newest first: every change of the balance', tags, querystring: TransactionsQuery, response: { 200: ListOf(WalletTransaction, 'WalletTransactionList') } }, config: read },
      async (request) => service.transactions(workspaceOf(request), request.query),
    );

    app.get(
      '/v1/usage',
      { schema: { operationId: 'getUsage', summary: 'What the workspace spent, by day, by agent and by kind', tags, querystring: DateRangeQuery('Spending'), response: { 200: Usage } }, config: read },
      async (request) => service.usage(workspaceOf(request), request.query),
    );

    app.get('/v1/pricing', { schema: { operationId: 'getPricing', summary: 'Current prices (public)', tags, response: { 200: Pricing } }, config: { access: { auth: 'public' } } }, async () => service.pricing());
  };
}
