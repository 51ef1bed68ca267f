import type { Executor } from '../../platform/db/schema.ts';
import type { EmailTokensTable } from '../../platform/db/foundation-tables.ts';
import type { PageRequest } from '../../platform/pagination.ts';

type EmailTokenPurpose = EmailTokensTable['purpose'];

// Queries of users, sessions and refresh tokens. Users are global (not workspace-scoped):
// every read is by the caller's own id or by a login email.

export function createUsersRepo() {
  return {
    findByEmail(db: Executor, email: string) {
      return db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
    },
    findById(db: Executor, id: string) {
      return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    },
    insert(db: Executor, row: { id: string; email: string; name: string | null; password_hash: string; now: Date }) {
      return db
        .insertInto('users')
        .values({ id: row.id, email: row.email.toLowerCase(), name: row.name, password_hash: row.password_hash, created_at: row.now, updated_at: row.now })
        .returningAll()
        .executeTakeFirstOrThrow();
    },
    insertSession(db: Executor, row: { id: string; userId: string; device: string | null; ip: string | null; now: Date; expiresAt: Date }) {
      return db
        .insertInto('sessions')
        .values({ id: row.id, user_id: row.userId, device: row.device, ip: row.ip, created_at: row.now, last_used_at: row.now, expires_at: row.expiresAt })
        .execute();
    },
    insertRefreshToken(db: Executor, row: { tokenHash: string; sessionId: string; now: Date; expiresAt: Date }) {
      return db
        .insertInto('refresh_tokens')
        .values({ token_hash: row.tokenHash, session_id: row.sessionId, created_at: row.now, expires_at: row.expiresAt })
        .execute();
    },

    update(db: Executor, id: string, patch: { name?: string | null; email?: string; email_verified_at?: Date | null; password_hash?: string; now: Date }) {
      const { now, ...fields } = patch;
      return db.updateTable('users').set({ ...fields, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    },
    /** Marks the address verified, keeping the first verification time. */
    markEmailVerified(db: Executor, id: string, now: Date) {
      return db
        .updateTable('users')
        .set((eb) => ({ email_verified_at: eb.fn.coalesce('email_verified_at', eb.val(now)), updated_at: now }))
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    // Sessions. "Active" means neither revoked nor expired; only active sessions are listed or revocable.

    listActiveSessions(db: Executor, userId: string, now: Date, page: PageRequest) {
      let query = db
        .selectFrom('sessions')
        .select(['id', 'device', 'ip', 'created_at', 'last_used_at'])
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now);
      if (page.after !== undefined) query = query.where('id', '<', page.after);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },
    /** Revokes one active session of this user; undefined when there is none. */
    revokeSession(db: Executor, userId: string, sessionId: string, now: Date, reason: string) {
      return db
        .updateTable('sessions')
        .set({ revoked_at: now, revoked_reason: reason })
        .where('id', '=', sessionId)
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('id')
        .executeTakeFirst();
    },
    /** Revokes every open session of the user, but `keep` when given. */
    revokeAllSessions(db: Executor, userId: string, now: Date, reason: string, keep?: string) {
      let query = db.updateTable('sessions').set({ revoked_at: now, revoked_reason: reason }).where('user_id', '=', userId).where('revoked_at', 'is', null);
      if (keep !== undefined) query = query.where('id', '!=', keep);
      return query.execute();
    },
    touchSession(db: Executor, sessionId: string, now: Date) {
      return db.updateTable('sessions').set({ last_used_at: now }).where('id', '=', sessionId).execute();
    },

    // Refresh tokens.

    findRefreshToken(db: Executor, tokenHash: string) {
      return db
        .selectFrom('refresh_tokens')
        .innerJoin('sessions', 'sessions.id', 'refresh_tokens.session_id')
        .select([
          'refresh_tokens.session_id',
          'refresh_tokens.expires_at',
          'refresh_tokens.used_at',
          'sessions.user_id',
          'sessions.revoked_at as session_revoked_at',
          'sessions.expires_at as session_expires_at',
        ])
        .where('refresh_tokens.token_hash', '=', tokenHash)
        .executeTakeFirst();
    },
    /** Marks an unused refresh token used; undefined when another request used it first. */
    claimRefreshToken(db: Executor, tokenHash: string, now: Date) {
      return db
        .updateTable('refresh_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .returning('session_id')
        .executeTakeFirst();
    },

    // Mailed single-use tokens.

    findEmailToken(db: Executor, tokenHash: string, purpose: EmailTokenPurpose) {
      return db.selectFrom('email_tokens').select(['user_id', 'expires_at', 'used_at']).where('token_hash', '=', tokenHash).where('purpose', '=', purpose).executeTakeFirst();
    },
    /** Uses a valid (unused, unexpired) token; undefined when it is not one. */
    claimEmailToken(db: Executor, tokenHash: string, purpose: EmailTokenPurpose, now: Date) {
      return db
        .updateTable('email_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('purpose', '=', purpose)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('user_id')
        .executeTakeFirst();
    },
    /** Spends every outstanding token of these purposes (after a password or email change). */
    spendEmailTokens(db: Executor, userId: string, purposes: EmailTokenPurpose[], now: Date) {
      return db.updateTable('email_tokens').set({ used_at: now }).where('user_id', '=', userId).where('purpose', 'in', purposes).where('used_at', 'is', null).execute();
    },
  };
}

export type UsersRepo = ReturnType<typeof createUsersRepo>;
