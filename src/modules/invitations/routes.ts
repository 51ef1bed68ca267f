import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { userOf } from '../../platform/auth/authenticate.ts';
import type { Platform } from '../../platform/platform.ts';
import { createWorkspacesRepo } from '../workspaces/repo.ts';
import { createInvitationsRepo } from './repo.ts';
import { AcceptedInvitation, TokenParams } from './schemas.ts';
import { createInvitationsService } from './service.ts';

// Accepting an invitation. Creating, listing and revoking them are workspace routes
// (/v1/workspaces/{id}/members and /invitations), declared in the workspaces module.

export function invitationsRoutes(platform: Platform): FastifyPluginAsyncTypebox {
  const service = createInvitationsService({ ...platform, invitations: createInvitationsRepo(), workspaces: createWorkspacesRepo() });

  return async (app) => {
    app.post(
      '/v1/invitations/:token/accept',
      {
        schema: {
          operationId: 'acceptInvitation',
          summary: 'Join a workspace with the token of an invitation mailed to the logged-in user',
          tags: ['invitations'],
          params: TokenParams,
          response: { 200: AcceptedInvitation },
        },
        config: { access: { auth: 'user' } },
      },
      async (request) => {
        const accepted = await service.accept(userOf(request), request.params.token);
        // The request acted in the workspace just joined: its audit row goes there, naming the invitation (never the token).
        request.workspace = accepted.context;
        request.auditResourceId = accepted.invitationId;
        return accepted.result;
      },
    );
  };
}
