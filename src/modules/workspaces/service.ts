import { type Principal, ROLE_SCOPE, type Role, scopeAllows, type WorkspaceContext } from '../../platform/auth/access.ts';
import type { GatePublisher } from '../../platform/auth/gate.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import type { WorkspacesTable } from '../../platform/db/foundation-tables.ts';
import { AppError, conflict, forbidden, invalidField, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { decodeCursor, type Page, pageRequest, toPage } from '../../platform/pagination.ts';
import type { WalletRepo } from '../wallet/repo.ts';
import type { MemberCursor, MemberRow, WorkspacesRepo } from './repo.ts';
import type { Member, MemberUpdate, Workspace, WorkspaceCreate, WorkspaceUpdate } from './schemas.ts';

export interface WorkspacesServiceDeps {
  db: Database;
  clock: Clock;
  workspaces: WorkspacesRepo;
  wallet: Pick<WalletRepo, 'create'>;
  config: { calls: { maxConcurrent: number } };
  /** Told after each commit that removes a member, changes a role or deletes a workspace. */
  gate: GatePublisher;
}

type UserPrincipal = Principal & { type: 'user' };

export function presentWorkspace(
  row: Pick<WorkspacesTable, 'id' | 'name'> & { max_concurrent_calls: number | null; created_at: Date | string; updated_at: Date | string },
  role: Role | null,
  defaultMaxConcurrentCalls: number,
): Workspace {
  return {
    id: row.id,
    name: row.name,
    role,
    settings: { max_concurrent_calls: row.max_concurrent_calls ?? defaultMaxConcurrentCalls },
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export function presentMember(row: MemberRow): Member {
  return { user_id: row.user_id, email: row.email, name: row.name, role: row.role, joined_at: new Date(row.joined_at).toISOString() };
}

/** The context of a user acting in a workspace as `role` (what the gate builds for a JWT). */
export function userContext(principal: UserPrincipal, workspaceId: string, role: Role): WorkspaceContext {
  return {
    workspaceId,
    scope: ROLE_SCOPE[role],
    role,
    userId: principal.userId,
    actor: { type: 'user', id: principal.userId, name: principal.email },
  };
}

/** Member-list cursors carry the join time and the user id (members have no time-sortable id). */
function memberCursor(cursor: string | undefined): MemberCursor | undefined {
  const key = decodeCursor(cursor);
  if (key === undefined) return undefined;
  const [time, userId] = key.split('|');
  const joinedAt = new Date(time ?? '');
  if (!userId || Number.isNaN(joinedAt.getTime())) throw invalidField('query.cursor', 'is not a cursor returned by this list');
  return { joinedAt, userId };
}

const onlyOwnersManageOwners = () => forbidden('only an owner can grant the owner role or change or remove an owner');
const lastOwner = () => conflict('the workspace must keep at least one owner; make another member owner first');

export function createWorkspacesService(deps: WorkspacesServiceDeps) {
  const { db, clock, workspaces, gate } = deps;
  const maxCalls = deps.config.calls.maxConcurrent;

  return {
    async list(principal: UserPrincipal, query: { limit?: number; cursor?: string }): Promise<Page<Workspace>> {
      const page = pageRequest(query);
      const rows = await workspaces.listForUser(db, principal.userId, page);
      return toPage(rows, page, (row) => row.id, (row) => presentWorkspace(row, row.role, maxCalls));
    },

    /** A new workspace owned by the caller, with an empty wallet (the signup credit is for the personal workspace only). */
    async create(principal: UserPrincipal, body: WorkspaceCreate): Promise<Workspace> {
      const now = clock.now();
      const row = await db.transaction().execute(async (tx) => {
        const workspace = await workspaces.insertWithOwner(tx, { id: newId('ws'), name: body.name.trim(), ownerId: principal.userId, now });
        await deps.wallet.create(tx, { workspaceId: workspace.id, now });
        return workspace;
      });
      return presentWorkspace(row, 'owner', maxCalls);
    },

    async get(ctx: WorkspaceContext): Promise<Workspace> {
      const row = await workspaces.find(db, ctx.workspaceId);
      if (!row) throw notFound('workspace');
      return presentWorkspace(row, ctx.role ?? null, maxCalls);
    },

    async update(ctx: WorkspaceContext, body: WorkspaceUpdate): Promise<Workspace> {
      const row = await workspaces.update(db, ctx.workspaceId, { name: body.name?.trim(), max_concurrent_calls: body.settings?.max_concurrent_calls }, clock.now());
      if (!row) throw notFound('workspace');
      return presentWorkspace(row, ctx.role ?? null, maxCalls);
    },

    /** Owners only. The caller's last workspace is kept: a user without one could act nowhere. */
    async delete(ctx: WorkspaceContext): Promise<void> {
      if (ctx.role !== 'owner' || !ctx.userId) throw forbidden('only an owner can delete the workspace');
      const userId = ctx.userId;
      await db.transaction().execute(async (tx) => {
        if (!(await workspaces.lock(tx, ctx.workspaceId))) throw notFound('workspace');
        if ((await workspaces.countForUser(tx, userId)) <= 1) {
          throw conflict('this is your only workspace; create another one before deleting it');
        }
        await workspaces.delete(tx, ctx.workspaceId);
      });
      await gate.publish([{ kind: 'workspace', id: ctx.workspaceId }]);
    },

    async listMembers(ctx: WorkspaceContext, query: { limit?: number; cursor?: string }): Promise<Page<Member>> {
      const limit = pageRequest({ limit: query.limit }).limit;
      const rows = await workspaces.listMembers(db, ctx.workspaceId, { limit, after: memberCursor(query.cursor) });
      return toPage(rows, { limit }, (row) => `${new Date(row.joined_at).toISOString()}|${row.user_id}`, presentMember);
    },

    /**
     * The caller's context in a workspace named by a path parameter, for the one route the gate
     * cannot admit by scope alone (a viewer may leave: DELETE on their own membership).
     */
    async memberContext(principal: UserPrincipal, workspaceId: string): Promise<WorkspaceContext> {
      const own = await workspaces.findMember(db, workspaceId, principal.userId);
      if (!own) throw notFound('workspace');
      return userContext(principal, workspaceId, own.role);
    },

    /** Owners grant and change the owner role; admins manage everyone else. The last owner stays. */
    async updateMember(ctx: WorkspaceContext, userId: string, body: MemberUpdate): Promise<Member> {
      const member = await db.transaction().execute(async (tx) => {
        if (!(await workspaces.lock(tx, ctx.workspaceId))) throw notFound('workspace');
        const target = await workspaces.findMember(tx, ctx.workspaceId, userId);
        if (!target) throw notFound('member');
        if ((body.role === 'owner' || target.role === 'owner') && ctx.role !== 'owner' && target.role !== body.role) {
          throw onlyOwnersManageOwners();
        }
        if (target.role === 'owner' && body.role !== 'owner' && (await workspaces.countOwners(tx, ctx.workspaceId)) <= 1) throw lastOwner();
        if (target.role !== body.role) await workspaces.updateRole(tx, ctx.workspaceId, userId, body.role, clock.now());
        return presentMember({ ...target, role: body.role });
      });
      await gate.publish([{ kind: 'member', workspaceId: ctx.workspaceId, userId }]);
      return member;
    },

    /** Admins remove members (owners also remove owners); any member may remove themselves (leave). */
    async removeMember(ctx: WorkspaceContext, userId: string): Promise<void> {
      const leaving = ctx.userId === userId;
      if (!leaving && !scopeAllows(ctx.scope, 'admin')) {
        throw new AppError('insufficient_scope', `removing another member needs the admin scope; the caller has ${ctx.scope}`);
      }
      await db.transaction().execute(async (tx) => {
        if (!(await workspaces.lock(tx, ctx.workspaceId))) throw notFound('workspace');
        const target = await workspaces.findMember(tx, ctx.workspaceId, userId);
        if (!target) throw notFound('member');
        if (target.role === 'owner') {
          if (!leaving && ctx.role !== 'owner') throw onlyOwnersManageOwners();
          if ((await workspaces.countOwners(tx, ctx.workspaceId)) <= 1) throw lastOwner();
        }
        await workspaces.deleteMember(tx, ctx.workspaceId, userId);
      });
      await gate.publish([{ kind: 'member', workspaceId: ctx.workspaceId, userId }]);
    },
  };
}

export type WorkspacesService = ReturnType<typeof createWorkspacesService>;
