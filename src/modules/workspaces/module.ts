import type { Platform } from '../../platform/platform.ts';
import { createWalletRepo } from '../wallet/repo.ts';
import { createWorkspacesRepo } from './repo.ts';
import { workspacesRoutes } from './routes.ts';
import { createWorkspacesService } from './service.ts';

// The workspaces module: workspaces and their members (a new workspace's wallet through the wallet repo).

export function createWorkspacesModule(platform: Platform) {
  const service = createWorkspacesService({ ...platform, workspaces: createWorkspacesRepo(), wallet: createWalletRepo() });
  return { routes: workspacesRoutes(service), service };
}
