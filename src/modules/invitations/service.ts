import type { Config } from '../../config.ts';
import type { Principal, WorkspaceContext } from '../../platform/auth/access.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { conflict, forbidden, invalidState, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Mailer } from '../../platform/mailer.ts';
import { type Page, pageRequest, toPage } from '../../platform/pagination.ts';
import { randomToken, sha256Hex } from '../../platform/secrets.ts';
import type { WorkspacesRepo } from '../workspaces/repo.ts';
import { presentMember, presentWorkspace, userContext } from '../workspaces/service.ts';
import type { InvitationRow, InvitationsRepo } from './repo.ts';
import type { AcceptedInvitation, Invitation, InvitationStatus, InviteBody } from './schemas.ts';

export const INVITATION_TTL_MS = 7 * 86_400_000;

export interface InvitationsServiceDeps {
  db: Database;
  clock: Clock;
  mailer: Mailer;
  config: Pick<Config, 'publicBaseUrl' | 'calls'>;
  invitations: InvitationsRepo;
  workspaces: WorkspacesRepo;
}

type UserPrincipal = Principal & { type: 'user' };

function statusOf(row: InvitationRow, now: Date): InvitationStatus {
  if (row.accepted_at) return 'accepted';
  if (row.revoked_at) return 'revoked';
  return new Date(row.expires_at) <= now ? 'expired' : 'pending';
}

export function presentInvitation(row: InvitationRow, now: Date): Invitation {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    email: row.email,
    role: row.role,
    status: statusOf(row, now),
    invited_by: row.invited_by,
    created_at: new Date(row.created_at).toISOString(),
    expires_at: new Date(row.expires_at).toISOString(),
  };
}

export function createInvitationsService(deps: InvitationsServiceDeps) {
  const { db, clock, mailer, config, invitations, workspaces } = deps;

  return {
    /**
     * Invites an address (POST /workspaces/{id}/members always goes through an invitation, even for
     * an existing user). A new invitation replaces an open one for the same address (a resend).
     */
    async invite(ctx: WorkspaceContext, body: InviteBody): Promise<Invitation> {
      if (body.role === 'owner' && ctx.role !== 'owner') throw forbidden('only an owner can invite another owner');
      const email = body.email.toLowerCase();
      const now = clock.now();
      const token = randomToken('iv_');
      const { row, workspaceName } = await db.transaction().execute(async (tx) => {
        const workspace = await workspaces.find(tx, ctx.workspaceId);
        if (!workspace) throw notFound('workspace');
        if (await workspaces.findMemberByEmail(tx, ctx.workspaceId, email)) throw conflict(`${email} is already a member of this workspace`);
        await invitations.revokeOpenFor(tx, ctx.workspaceId, email, now);
        const row = await invitations.insert(tx, {
          id: newId('inv'),
          workspaceId: ctx.workspaceId,
          email,
          role: body.role,
          tokenHash: sha256Hex(token),
          invitedBy: ctx.userId ?? null,
          now,
          expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
        });
        return { row, workspaceName: workspace.name };
      });
      const link = `${config.publicBaseUrl}/invitations/${token}`;
      const inviter = ctx.actor.name ?? 'A member';
      // Mailed after the commit: a transaction never awaits anything but the database.
      await mailer.send({
        to: email,
        subject: `You are invited to join ${workspaceName}`,
        text:
          `${inviter} invited you to join the workspace "${workspaceName}" as ${body.role}.\n\n` +
          `Accept by opening this link while logged in as ${email} (valid 7 days):\n\n${link}\n\n` +
          `Or POST to /v1/invitations/${token}/accept with your access token.\nIf you did not expect this, ignore this mail.\n`,
        meta: { purpose: 'invitation', token, link, invitation_id: row.id, workspace_id: ctx.workspaceId },
      });
      return presentInvitation(row, now);
    },

    async listPending(ctx: WorkspaceContext, query: { limit?: number; cursor?: string }): Promise<Page<Invitation>> {
      const page = pageRequest(query);
      const now = clock.now();
      const rows = await invitations.listPending(db, ctx.workspaceId, now, page);
      return toPage(rows, page, (row) => row.id, (row) => presentInvitation(row, now));
    },

    /** Revoking is idempotent; an accepted invitation cannot be revoked (remove the member instead). */
    async revoke(ctx: WorkspaceContext, id: string): Promise<void> {
      const row = await invitations.find(db, ctx.workspaceId, id);
      if (!row) throw notFound('invitation');
      if (row.accepted_at) throw invalidState('the invitation was already accepted; remove the member instead');
      if (!row.revoked_at) await invitations.revoke(db, ctx.workspaceId, id, clock.now());
    },

    /**
     * Accepts by the logged-in user the invitation was sent to. Unknown, revoked and expired tokens
     * are all 404 (the token names no open invitation); a used one is 409.
     */
    async accept(principal: UserPrincipal, token: string): Promise<{ result: AcceptedInvitation; context: WorkspaceContext; invitationId: string }> {
      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        const row = await invitations.findByTokenHashForUpdate(tx, sha256Hex(token));
        if (!row) throw notFound('invitation');
        if (row.email !== principal.email.toLowerCase()) {
          throw forbidden('this invitation was sent to another email address; log in with that address to accept it');
        }
        const status = statusOf(row, now);
        if (status === 'accepted') throw invalidState('the invitation was already accepted');
        if (status !== 'pending') throw notFound('invitation');
        await workspaces.lock(tx, row.workspace_id);
        const workspace = await workspaces.find(tx, row.workspace_id);
        if (!workspace) throw notFound('invitation');
        if (await workspaces.findMember(tx, row.workspace_id, principal.userId)) throw conflict('you are already a member of this workspace');
        await workspaces.insertMember(tx, { workspaceId: row.workspace_id, userId: principal.userId, role: row.role, now });
        await invitations.markAccepted(tx, row.id, principal.userId, now);
        const member = await workspaces.findMember(tx, row.workspace_id, principal.userId);
        if (!member) throw notFound('member');
        return {
          result: { workspace: presentWorkspace(workspace, row.role, config.calls.maxConcurrent), member: presentMember(member) },
          context: userContext(principal, row.workspace_id, row.role),
          invitationId: row.id,
        };
      });
    },
  };
}

export type InvitationsService = ReturnType<typeof createInvitationsService>;
