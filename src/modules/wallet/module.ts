import type { Platform } from '../../platform/platform.ts';
import { createWalletRepo, type SpendByAgent } from './repo.ts';
import { walletRoutes } from './routes.ts';
import { createWalletService } from './service.ts';

// The wallet module: the balance and its settings, the ledger, usage and pricing.

export function createWalletModule(platform: Platform, deps: { spendByAgent: SpendByAgent }) {
  const service = createWalletService({ db: platform.db, clock: platform.clock, config: platform.config, wallet: createWalletRepo(), spendByAgent: deps.spendByAgent });
  return { routes: walletRoutes(service), service };
}
