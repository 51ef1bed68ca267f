import type { Executor } from '../../platform/db/schema.ts';
import type { Scope } from '../../platform/auth/access.ts';
import type { PageRequest } from '../../platform/pagination.ts';

// Queries of API keys. Every read takes the workspace: a key of another workspace is not found.
// The key itself is never stored, only its SHA-256; nothing here selects the hash back.

const COLUMNS = ['id', 'name', 'scope', 'prefix', 'last4', 'created_at', 'last_used_at', 'last_used_ip', 'revoked_at'] as const;

export function createApiKeysRepo() {
  return {
    insert(db: Executor, row: { id: string; workspaceId: string; name: string; scope: Scope; keyHash: string; prefix: string; last4: string; createdBy: string | null; now: Date }) {
      return db
        .insertInto('api_keys')
        .values({
          id: row.id,
          workspace_id: row.workspaceId,
          name: row.name,
          scope: row.scope,
          key_hash: row.keyHash,
          prefix: row.prefix,
          last4: row.last4,
          created_by: row.createdBy,
          created_at: row.now,
        })
        .returning(COLUMNS)
        .executeTakeFirstOrThrow();
    },
    find(db: Executor, workspaceId: string, id: string) {
      return db.selectFrom('api_keys').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },
    list(db: Executor, workspaceId: string, page: PageRequest) {
      let query = db.selectFrom('api_keys').select(COLUMNS).where('workspace_id', '=', workspaceId);
      if (page.after !== undefined) query = query.where('id', '<', page.after);
      return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
    },
    rename(db: Executor, workspaceId: string, id: string, name: string) {
      return db.updateTable('api_keys').set({ name }).where('workspace_id', '=', workspaceId).where('id', '=', id).returning(COLUMNS).executeTakeFirst();
    },
    /** Sets revoked_at once; revoking a revoked key keeps its first revocation time. */
    revoke(db: Executor, workspaceId: string, id: string, now: Date) {
      return db
        .updateTable('api_keys')
        .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(now)) }))
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .returning(COLUMNS)
        .executeTakeFirst();
    },
  };
}

export type ApiKeysRepo = ReturnType<typeof createApiKeysRepo>;
export type ApiKeyRow = NonNullable<Awaited<ReturnType<ApiKeysRepo['find']>>>;
