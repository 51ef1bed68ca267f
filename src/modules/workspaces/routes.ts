import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { userOf, workspaceOf } from '../../platform/auth/authenticate.ts';
import { ListQuery, NoContent } from '../../platform/http/schemas.ts';
import { Member, MemberList, MemberParams, MemberUpdate, Workspace, WorkspaceCreate, WorkspaceList, WorkspaceParams, WorkspaceUpdate } from './schemas.ts';
import { userContext, type WorkspacesService } from './service.ts';

// The workspaces the caller belongs to and their members (inviting, and the pending invitations,
// are the invitations module's). Routes under /workspaces/{id} name their workspace in the path:
// the gate admits members of that workspace only.

export function workspacesRoutes(service: WorkspacesService): FastifyPluginAsyncTypebox {
  const tags = ['workspaces'];
  const inWorkspace = (scope: 'read-only' | 'admin', userOnly = false) =>
    ({ auth: 'workspace', scope, workspaceParam: 'id', ...(userOnly ? { userOnly: true } : {}) }) as const;

  return async (app) => {
    app.get(
      '/v1/workspaces',
      {
        schema: { operationId: 'listWorkspaces', summary: "List the caller's workspaces with the caller's role in each", tags, querystring: ListQuery, response: { 200: WorkspaceList } },
        config: { access: { auth: 'user' } },
      },
      async (request) => service.list(userOf(request), request.query),
    );

    app.post(
      '/v1/workspaces',
      {
        schema: {
          operationId: 'createWorkspace',
          summary: 'Create a workspace owned by the caller, with an empty wallet',
          tags,
          body: WorkspaceCreate,
          response: { 201: Workspace },
        },
        config: { access: { auth: 'user' } },
      },
      async (request, reply) => {
        const principal = userOf(request);
        const created = await service.create(principal, request.body);
        // A user route has no workspace context; the request acted in the new workspace, so the audit row goes there.
        request.workspace = userContext(principal, created.id, 'owner');
        request.auditResourceId = created.id;
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/v1/workspaces/:id',
      {
        schema: { operationId: 'getWorkspace', summary: 'Get a workspace the caller belongs to', tags, params: WorkspaceParams, response: { 200: Workspace } },
        config: { access: inWorkspace('read-only') },
      },
      async (request) => service.get(workspaceOf(request)),
    );

    app.patch(
      '/v1/workspaces/:id',
      {
        schema: {
          operationId: 'updateWorkspace',
          summary: 'Rename a workspace (owner or admin)',
          tags,
          params: WorkspaceParams,
          body: WorkspaceUpdate,
          response: { 200: Workspace },
        },
        config: { access: inWorkspace('admin', true) },
      },
      async (request) => service.update(workspaceOf(request), request.body),
    );

    app.delete(
      '/v1/workspaces/:id',
      {
        schema: {
          operationId: 'deleteWorkspace',
          summary: 'Delete a workspace and everything in it (owner only; not the caller\'s only workspace)',
          tags,
          params: WorkspaceParams,
          response: { 204: NoContent },
        },
        config: { access: inWorkspace('admin', true) },
      },
      async (request, reply) => {
        await service.delete(workspaceOf(request));
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v1/workspaces/:id/members',
      {
        schema: {
          operationId: 'listMembers',
          summary: 'List the members of a workspace, newest first',
          tags,
          params: WorkspaceParams,
          querystring: ListQuery,
          response: { 200: MemberList },
        },
        config: { access: inWorkspace('read-only') },
      },
      async (request) => service.listMembers(workspaceOf(request), request.query),
    );


    app.patch(
      '/v1/workspaces/:id/members/:user_id',
      {
        schema: {
          operationId: 'updateMember',
          summary: "Change a member's role (only an owner grants or changes the owner role; the last owner stays)",
          tags,
          params: MemberParams,
          body: MemberUpdate,
          response: { 200: Member },
        },
        config: { access: inWorkspace('admin', true), audit: { resourceParam: 'user_id' } },
      },
      async (request) => service.updateMember(workspaceOf(request), request.params.user_id, request.body),
    );

    app.delete(
      '/v1/workspaces/:id/members/:user_id',
      {
        schema: {
          operationId: 'removeMember',
          summary: 'Remove a member (owner or admin), or leave the workspace (your own user id); the last owner stays',
          tags,
          params: MemberParams,
          response: { 204: NoContent },
        },
        // A user route, checked by the service: any member may remove themselves, which the
        // gate's scope rule (read-only callers may only GET) cannot express.
        config: { access: { auth: 'user' }, audit: { resourceParam: 'user_id' } },
      },
      async (request, reply) => {
        request.workspace = await service.memberContext(userOf(request), request.params.id);
        await service.removeMember(request.workspace, request.params.user_id);
        return reply.code(204).send(null);
      },
    );

  };
}
