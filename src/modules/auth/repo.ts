import type { Executor } from '../../platform/db/schema.ts';

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
  };
}

export type UsersRepo = ReturnType<typeof createUsersRepo>;
