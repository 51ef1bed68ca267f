import type { Executor } from '../../platform/db/schema.ts';

// The analytics' own read (executor first); the figures over calls are the calls module's
// (calls/figures.ts), handed in by the composition root.

export function createAnalyticsRepo() {
  return {
    /** Whether the workspace has (or had: deleted agents keep their calls' figures) this agent. */
    async hasAgent(db: Executor, workspaceId: string, agentId: string) {
      const row = await db.selectFrom('agents').select('id').where('workspace_id', '=', workspaceId).where('id', '=', agentId).executeTakeFirst();
      return row !== undefined;
    },
  };
}

export type AnalyticsRepo = ReturnType<typeof createAnalyticsRepo>;
