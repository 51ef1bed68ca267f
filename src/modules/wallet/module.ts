import type { Platform } from '../../platform/platform.ts';
import { createWalletRepo } from './repo.ts';
import { walletRoutes } from './routes.ts';
import { createWalletService } from './service.ts';

// The wallet module: the balance and its settings, the ledger, usage and pricing.

export function createWalletModule(platform: Platform) {
  const service = createWalletService({ ...platform, wallet: createWalletRepo() });
  return { routes: walletRoutes(service), service };
}
