import type { Database } from '../../platform/db/schema.ts';
import { AppError, invalidField } from '../../platform/errors.ts';
import { loadCallAgent, type RunnableAgent } from '../agents/call-agent.ts';

// What must hold before anything starts a call (an outbound call, a voice session, a campaign or
// a schedule): the agent exists in the workspace and the wallet has money. Each refusal is the
// same problem+json wherever the call starts.

/** The workspace's agent, or 422 naming `field`. */
export async function requireCallAgent(db: Database, workspaceId: string, agentId: string, field = 'agent_id'): Promise<RunnableAgent> {
  const agent = await loadCallAgent(db, workspaceId, agentId);
  if (!agent) throw invalidField(field, 'no such agent in this workspace');
  return agent;
}

/** True when the workspace's wallet is above zero. */
export async function hasFunds(db: Database, workspaceId: string): Promise<boolean> {
  const wallet = await db.selectFrom('wallets').select('balance_micros').where('workspace_id', '=', workspaceId).executeTakeFirst();
  return Number(wallet?.balance_micros ?? 0) > 0;
}

/** 402 insufficient_balance when the wallet is at zero or below; `what` says what was refused. */
export async function requireFunds(db: Database, workspaceId: string, what = 'place calls'): Promise<void> {
  if (!(await hasFunds(db, workspaceId))) throw new AppError('insufficient_balance', `The wallet balance is zero or below: top up to ${what}.`);
}
