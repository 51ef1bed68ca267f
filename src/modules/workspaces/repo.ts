import type { Executor } from '../../platform/db/schema.ts';
import type { Role } from '../../platform/auth/access.ts';

// Workspaces and memberships. Reads of a workspace go through a membership of the caller,
// so a workspace the caller does not belong to is simply not found.

export function createWorkspacesRepo() {
  return {
    async insertWithOwner(db: Executor, row: { id: string; name: string; ownerId: string; now: Date }) {
      const workspace = await db
        .insertInto('workspaces')
        .values({ id: row.id, name: row.name, created_by: row.ownerId, created_at: row.now, updated_at: row.now })
        .returningAll()
        .executeTakeFirstOrThrow();
      await this.insertMember(db, { workspaceId: row.id, userId: row.ownerId, role: 'owner', now: row.now });
      return workspace;
    },
    insertMember(db: Executor, row: { workspaceId: string; userId: string; role: Role; now: Date }) {
      return db
        .insertInto('memberships')
        .values({ workspace_id: row.workspaceId, user_id: row.userId, role: row.role, created_at: row.now, updated_at: row.now })
        .execute();
    },
  };
}

export type WorkspacesRepo = ReturnType<typeof createWorkspacesRepo>;
