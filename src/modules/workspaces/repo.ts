import { sql } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import type { Role } from '../../platform/auth/access.ts';

// Workspaces and memberships. Reads of a workspace go through a membership of the caller,
// so a workspace the caller does not belong to is simply not found.

/** Position in the member list (newest first): the join time, then the user id as tie-breaker. */
export interface MemberCursor {
  joinedAt: Date;
  userId: string;
}

const memberColumns = ['users.id as user_id', 'users.email', 'users.name', 'memberships.role', 'memberships.created_at as joined_at'] as const;

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
    /** A workspace no user owns (the demo's). */
    async insertUnowned(db: Executor, row: { id: string; name: string; now: Date }) {
      await db.insertInto('workspaces').values({ id: row.id, name: row.name, created_by: null, created_at: row.now, updated_at: row.now }).execute();
    },
    insertMember(db: Executor, row: { workspaceId: string; userId: string; role: Role; now: Date }) {
      return db
        .insertInto('memberships')
        .values({ workspace_id: row.workspaceId, user_id: row.userId, role: row.role, created_at: row.now, updated_at: row.now })
        .execute();
    },

    /** The user's workspaces with their role, newest first, `limit + 1` rows. */
    listForUser(db: Executor, userId: string, page: { limit: number; after?: string }) {
      let query = db
        .selectFrom('memberships')
        .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
        .select(['workspaces.id', 'workspaces.name', 'workspaces.max_concurrent_calls', 'workspaces.created_at', 'workspaces.updated_at', 'memberships.role'])
        .where('memberships.user_id', '=', userId);
      if (page.after !== undefined) query = query.where('workspaces.id', '<', page.after);
      return query.orderBy('workspaces.id', 'desc').limit(page.limit + 1).execute();
    },
    countForUser(db: Executor, userId: string) {
      return db
        .selectFrom('memberships')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow()
        .then((row) => row.n);
    },
    find(db: Executor, workspaceId: string) {
      return db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirst();
    },
    /**
     * Locks the workspace row until the transaction ends. Every change of memberships takes this
     * lock first, so two concurrent changes cannot both see "another owner remains".
     */
    lock(db: Executor, workspaceId: string) {
      return db.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forUpdate().executeTakeFirst();
    },
    /** Changes the fields given (undefined: unchanged). */
    update(db: Executor, workspaceId: string, changes: { name?: string; max_concurrent_calls?: number }, now: Date) {
      const set: { name?: string; max_concurrent_calls?: number; updated_at: Date } = { updated_at: now };
      if (changes.name !== undefined) set.name = changes.name;
      if (changes.max_concurrent_calls !== undefined) set.max_concurrent_calls = changes.max_concurrent_calls;
      return db.updateTable('workspaces').set(set).where('id', '=', workspaceId).returningAll().executeTakeFirst();
    },
    /** Deletes the workspace; its memberships, invitations, keys, wallet and other rows go with it (ON DELETE CASCADE). */
    delete(db: Executor, workspaceId: string) {
      return db.deleteFrom('workspaces').where('id', '=', workspaceId).executeTakeFirst();
    },

    findMember(db: Executor, workspaceId: string, userId: string) {
      return db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select(memberColumns)
        .where('memberships.workspace_id', '=', workspaceId)
        .where('memberships.user_id', '=', userId)
        .executeTakeFirst();
    },
    findMemberByEmail(db: Executor, workspaceId: string, email: string) {
      return db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select(memberColumns)
        .where('memberships.workspace_id', '=', workspaceId)
        .where('users.email', '=', email.toLowerCase())
        .executeTakeFirst();
    },
    /** Members, newest first, `limit + 1` rows. */
    listMembers(db: Executor, workspaceId: string, page: { limit: number; after?: MemberCursor }) {
      let query = db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select(memberColumns)
        .where('memberships.workspace_id', '=', workspaceId);
      const after = page.after;
      if (after) {
        query = query.where((eb) => eb(eb.refTuple('memberships.created_at', 'memberships.user_id'), '<', eb.tuple(after.joinedAt, after.userId)));
      }
      return query.orderBy('memberships.created_at', 'desc').orderBy('memberships.user_id', 'desc').limit(page.limit + 1).execute();
    },
    countOwners(db: Executor, workspaceId: string) {
      return db
        .selectFrom('memberships')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('role', '=', 'owner')
        .executeTakeFirstOrThrow()
        .then((row) => row.n);
    },
    updateRole(db: Executor, workspaceId: string, userId: string, role: Role, now: Date) {
      return db
        .updateTable('memberships')
        .set({ role, updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
    },
    deleteMember(db: Executor, workspaceId: string, userId: string) {
      return db.deleteFrom('memberships').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
    },
  };
}

export type WorkspacesRepo = ReturnType<typeof createWorkspacesRepo>;
export type MemberRow = NonNullable<Awaited<ReturnType<WorkspacesRepo['findMember']>>>;
