import type { Selectable } from 'kysely';
import type { Executor } from '../../platform/db/schema.ts';
import type { BrandingsTable } from './tables.ts';

// Queries of brandings: one row per workspace, found by workspace or (public lookup) by domain.

export type BrandingRow = Selectable<BrandingsTable>;
export type BrandingValues = Omit<BrandingRow, 'workspace_id' | 'created_at' | 'updated_at'>;

export function createBrandingRepo() {
  return {
    find(db: Executor, workspaceId: string) {
      return db.selectFrom('brandings').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
    },

    findByDomain(db: Executor, domain: string) {
      return db.selectFrom('brandings').selectAll().where('domain', '=', domain).executeTakeFirst();
    },

    /** Inserts or replaces the workspace's branding; a domain held by another workspace is a unique violation. */
    upsert(db: Executor, workspaceId: string, values: BrandingValues, now: Date) {
      return db
        .insertInto('brandings')
        .values({ workspace_id: workspaceId, ...values, created_at: now, updated_at: now })
        .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ ...values, updated_at: now }))
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    async remove(db: Executor, workspaceId: string): Promise<boolean> {
      const result = await db.deleteFrom('brandings').where('workspace_id', '=', workspaceId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

export type BrandingRepo = ReturnType<typeof createBrandingRepo>;
