import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { userOf, workspaceOf } from '../../platform/auth/authenticate.ts';
import { ListQuery, NoContent } from '../../platform/http/schemas.ts';
import { WorkspaceParams } from '../workspaces/schemas.ts';
import { AcceptedInvitation, Invitation, InvitationList, InvitationParams, InviteBody, TokenParams } from './schemas.ts';
import type { InvitationsService } from './service.ts';

// Invitations: made, listed and revoked under their workspace (/v1/workspaces/{id}/members and
// /invitations, in the workspaces tag beside the members), accepted by the invited user.

export function invitationsRoutes(service: InvitationsService): FastifyPluginAsyncTypebox {
  const tags = ['workspaces'];
  const inWorkspace = (scope: 'admin', userOnly = false) => ({ auth: 'workspace', scope, workspaceParam: 'id', ...(userOnly ? { userOnly: true } : {}) }) as const;

  return async (app) => {
    app.post(
      '/v1/workspaces/:id/members',
      {
        schema: {
          operationId: 'inviteMember',
          summary: 'Invite someone by email (always an invitation, mailed with a 7-day link; only an owner invites an owner)',
          tags,
          params: WorkspaceParams,
          body: InviteBody,
          response: { 201: Invitation },
        },
        config: { access: inWorkspace('admin', true) },
      },
      async (request, reply) => {
        const invitation = await service.invite(workspaceOf(request), request.body);
        request.auditResourceId = invitation.id;
        return reply.code(201).send(invitation);
      },
    );

    app.get(
      '/v1/workspaces/:id/invitations',
      {
        schema: {
          operationId: 'listInvitations',
          summary: 'List the pending invitations of a workspace, newest first',
          tags,
          params: WorkspaceParams,
          querystring: ListQuery,
          response: { 200: InvitationList },
        },
        config: { access: inWorkspace('admin') },
      },
      async (request) => service.listPending(workspaceOf(request), request.query),
    );

    app.delete(
      '/v1/workspaces/:id/invitations/:inv_id',
      {
        schema: {
          operationId: 'revokeInvitation',
          summary: 'Revoke an invitation: its link stops working (idempotent)',
          tags,
          params: InvitationParams,
          response: { 204: NoContent },
        },
        config: { access: inWorkspace('admin', true), audit: { resourceParam: 'inv_id' } },
      },
      async (request, reply) => {
        await service.revoke(workspaceOf(request), request.params.inv_id);
        return reply.code(204).send(null);
      },
    );

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
