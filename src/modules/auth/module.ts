import type { Platform } from '../../platform/platform.ts';
import { createWalletRepo } from '../wallet/repo.ts';
import { createWorkspacesRepo } from '../workspaces/repo.ts';
import { createUsersRepo } from './repo.ts';
import { authRoutes } from './routes.ts';
import { createAuthService } from './service.ts';

// The auth module: accounts, sessions and mailed tokens (a new account's workspace and wallet
// through their owners' repos).

export function createAuthModule(platform: Platform) {
  const service = createAuthService({ ...platform, users: createUsersRepo(), workspaces: createWorkspacesRepo(), wallet: createWalletRepo() });
  return { routes: authRoutes(service), service };
}
