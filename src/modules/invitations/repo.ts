import type { Executor } from '../../platform/db/schema.ts';
import type { Role } from '../../platform/auth/access.ts';

// Invitations to join a workspace. Reads by id are scoped to the workspace; the accept route
// finds an invitation by the SHA-256 of its mailed token, the only global lookup.

export function createInvitationsRepo() {
  return {
    insert(db: Executor, row: { id: string; workspaceId: string; email: string; role: Role; tokenHash: string; invitedBy: string | null; now: Date; expiresAt: Date }) {
      return db
        .insertInto('invitations')
        .values({
          id: row.id,
          workspace_id: row.workspaceId,
          email: row.email.toLowerCase(),
          role: row.role,
          token_hash: row.tokenHash,
          invited_by: row.invitedBy,
          created_at: row.now,
          expires_at: row.expiresAt,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },
    /** Pending invitations (not accepted, revoked or expired), newest first, `limit + 1` rows. */
    listPending(db: Executor, workspaceId: string, now: Date, page: { limit: number; after?: string }) {
      let query = db
        .selectFrom('invitations')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now);
      if (page.after !== undefined) query = query.where('id', '<', page.after);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },
    find(db: Executor, workspaceId: string, id: string) {
      return db.selectFrom('invitations').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },
    /** Locks the row: two concurrent accepts of one token cannot both succeed. */
    findByTokenHashForUpdate(db: Executor, tokenHash: string) {
      return db.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).forUpdate().executeTakeFirst();
    },
    revoke(db: Executor, workspaceId: string, id: string, now: Date) {
      return db
        .updateTable('invitations')
        .set({ revoked_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
    },
    /** Revokes the still-open invitations of one address (a new invitation replaces them). */
    revokeOpenFor(db: Executor, workspaceId: string, email: string, now: Date) {
      return db
        .updateTable('invitations')
        .set({ revoked_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('email', '=', email.toLowerCase())
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .execute();
    },
    markAccepted(db: Executor, id: string, userId: string, now: Date) {
      return db.updateTable('invitations').set({ accepted_at: now, accepted_by: userId }).where('id', '=', id).execute();
    },
  };
}

export type InvitationsRepo = ReturnType<typeof createInvitationsRepo>;
export type InvitationRow = Awaited<ReturnType<InvitationsRepo['insert']>>;
