import type { Platform } from '../../platform/platform.ts';
import { createWorkspacesRepo } from '../workspaces/repo.ts';
import { createInvitationsRepo } from './repo.ts';
import { invitationsRoutes } from './routes.ts';
import { createInvitationsService } from './service.ts';

// The invitations module: inviting members by email, and accepting (memberships through the workspaces repo).

export function createInvitationsModule(platform: Platform) {
  const service = createInvitationsService({ ...platform, invitations: createInvitationsRepo(), workspaces: createWorkspacesRepo() });
  return { routes: invitationsRoutes(service), service };
}
