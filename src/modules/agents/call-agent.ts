import type { Database } from '../../platform/db/schema.ts';
import type { AgentDestination } from '../../platform/outbox/emit.ts';
import type { CallAgent } from '../../runtime/call-agent.ts';
import { agentDestination, engineAgentOf } from './present.ts';

// The agent as a live call runs it: the engine's view plus voice, turn taking, limits, and the
// webhook destination its call events go to. Deleted agents run no new call.

export interface RunnableAgent extends CallAgent {
  webhook_secret: string;
  destination: AgentDestination | null;
}

export async function loadCallAgent(db: Database, workspaceId: string, agentId: string): Promise<RunnableAgent | undefined> {
  const row = await db
    .selectFrom('agents')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', agentId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    ...engineAgentOf(row),
    voice: row.voice,
    max_duration_seconds: row.max_duration_seconds,
    voicemail: row.voicemail,
    turn_end_silence_ms: row.turn_end_silence_ms,
    barge_in_min_ms: row.barge_in_min_ms,
    interruptible: row.interruptible,
    silence_timeout_seconds: row.silence_timeout_seconds,
    webhook_secret: row.webhook_secret,
    destination: agentDestination(row),
  };
}
