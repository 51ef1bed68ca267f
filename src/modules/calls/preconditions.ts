import type { Database, Executor } from '../../platform/db/schema.ts';
import { AppError, invalidField } from '../../platform/errors.ts';
import { toE164 } from '../../platform/phone.ts';
import { SANDBOX_CALLER_ID } from '../../providers/telephony/sandbox.ts';
import { loadCallAgent, type RunnableAgent } from '../agents/call-agent.ts';
import { isDoNotCall } from '../dnc/repo.ts';
import { findAssignedNumber } from '../phone-numbers/repo.ts';

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

/** A possible phone number as E.164, or 422 naming `field`. */
export function phoneField(raw: string, field: string): string {
  const number = toE164(raw);
  if (!number) throw invalidField(field, 'must be a possible phone number (E.164, e.g. +15550100200)');
  return number;
}

export interface OutboundInput {
  agent_id: string;
  to: string;
  from?: string | null;
}

/**
 * Everything POST /v1/calls/outbound checks before it queues a call, for every outbound call
 * (scheduled ones too): the numbers, the agent, the caller id, the do-not-call list and (unless
 * `funds: false`) the wallet. Answers the numbers to dial with, or throws the refusal.
 */
export async function checkOutbound(
  db: Executor,
  workspaceId: string,
  input: OutboundInput,
  options: { telephonyProvider: 'sandbox' | 'twilio'; funds?: boolean },
): Promise<{ to: string; from: string; agent: RunnableAgent }> {
  const to = phoneField(input.to, 'to');
  const agent = await requireCallAgent(db as Database, workspaceId, input.agent_id);
  let from = input.from ? phoneField(input.from, 'from') : null;
  if (from && options.telephonyProvider !== 'sandbox') {
    const owned = await findAssignedNumber(db as Database, from);
    if (!owned || owned.workspace_id !== workspaceId) throw new AppError('no_caller_id', "from is not one of this workspace's phone numbers.");
  }
  if (!from) {
    if (options.telephonyProvider !== 'sandbox') throw new AppError('no_caller_id', "No caller id: pass from, one of the workspace's phone numbers.");
    from = SANDBOX_CALLER_ID;
  }
  if (await isDoNotCall(db, workspaceId, to)) throw new AppError('do_not_call', `${to} is on the workspace's do-not-call list.`);
  if (options.funds !== false) await requireFunds(db as Database, workspaceId);
  return { to, from, agent };
}
