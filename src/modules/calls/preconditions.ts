import type { Database, Executor } from '../../platform/db/schema.ts';
import { AppError, invalidField } from '../../platform/errors.ts';
import { toE164 } from '../../platform/phone.ts';
import { SANDBOX_CALLER_ID } from '../../ports/telephony.ts';
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

const noFunds = (what: string) => new AppError('insufficient_balance', `The wallet balance is zero or below: top up to ${what}.`);

/** 402 insufficient_balance when the wallet is at zero or below; `what` says what was refused. */
export async function requireFunds(db: Database, workspaceId: string, what = 'place calls'): Promise<void> {
  if (!(await hasFunds(db, workspaceId))) throw noFunds(what);
}

const PHONE_MESSAGE = 'must be a possible phone number (E.164, e.g. +15550100200)';

/** A possible phone number as E.164, or 422 naming `field`. */
export function phoneField(raw: string, field: string): string {
  const number = toE164(raw);
  if (!number) throw invalidField(field, PHONE_MESSAGE);
  return number;
}

export interface OutboundInput {
  agent_id: string;
  to: string;
  from?: string | null;
}

export interface OutboundOptions {
  /** The telephony's caller ids are the workspace's numbers (TelephonyCapabilities.ownsCallerIds); else it provides one. */
  ownsCallerIds: boolean;
  /** false: the wallet is not checked (a call placed later reads it then). */
  funds?: boolean;
}

/** The numbers a checked outbound call dials with, or why it may not be placed. */
export type OutboundVerdict = { ok: true; to: string; from: string } | { ok: false; error: AppError };

/**
 * Everything POST /v1/calls/outbound checks before it queues a call, for every outbound call
 * (scheduled ones too), in this order: the number to call, the agent, the caller id, the
 * do-not-call list and (unless `funds: false`) the wallet. Many calls at once read each table
 * once (a batch of due schedules); one verdict per input, in order.
 */
export async function checkOutboundMany(db: Executor, inputs: Array<OutboundInput & { workspaceId: string }>, options: OutboundOptions): Promise<OutboundVerdict[]> {
  if (inputs.length === 0) return [];
  const key = (workspaceId: string, value: string) => `${workspaceId}|${value}`;
  const workspaceIds = [...new Set(inputs.map((i) => i.workspaceId))];
  const tos = inputs.map((i) => toE164(i.to));
  const froms = inputs.map((i) => (i.from ? toE164(i.from) : null));
  const agents = await db.selectFrom('agents').select(['id', 'workspace_id']).where('id', 'in', [...new Set(inputs.map((i) => i.agent_id))]).where('deleted_at', 'is', null).execute();
  const liveAgents = new Set(agents.map((a) => key(a.workspace_id, a.id)));
  const dialed = [...new Set(tos.filter((n): n is string => n !== null))];
  const listed = dialed.length === 0 ? [] : await db.selectFrom('dnc_numbers').select(['workspace_id', 'number']).where('workspace_id', 'in', workspaceIds).where('number', 'in', dialed).execute();
  const doNotCall = new Set(listed.map((r) => key(r.workspace_id, r.number)));
  const callerIds = !options.ownsCallerIds ? [] : [...new Set(froms.filter((n): n is string => n !== null))];
  const owned = callerIds.length === 0 ? [] : await db.selectFrom('phone_numbers').select(['number', 'workspace_id']).where('number', 'in', callerIds).execute();
  const ownerOf = new Map(owned.map((r) => [r.number, r.workspace_id]));
  const wallets = options.funds === false ? [] : await db.selectFrom('wallets').select(['workspace_id', 'balance_micros']).where('workspace_id', 'in', workspaceIds).execute();
  const funded = new Set(wallets.filter((w) => Number(w.balance_micros) > 0).map((w) => w.workspace_id));

  return inputs.map((input, i): OutboundVerdict => {
    const refuse = (error: AppError): OutboundVerdict => ({ ok: false, error });
    const to = tos[i];
    if (!to) return refuse(invalidField('to', PHONE_MESSAGE));
    if (!liveAgents.has(key(input.workspaceId, input.agent_id))) return refuse(invalidField('agent_id', 'no such agent in this workspace'));
    let from = froms[i];
    if (input.from && !from) return refuse(invalidField('from', PHONE_MESSAGE));
    if (from && options.ownsCallerIds && ownerOf.get(from) !== input.workspaceId) {
      return refuse(new AppError('no_caller_id', "from is not one of this workspace's phone numbers."));
    }
    if (!from) {
      if (options.ownsCallerIds) return refuse(new AppError('no_caller_id', "No caller id: pass from, one of the workspace's phone numbers."));
      from = SANDBOX_CALLER_ID;
    }
    if (doNotCall.has(key(input.workspaceId, to))) return refuse(new AppError('do_not_call', `${to} is on the workspace's do-not-call list.`));
    if (options.funds !== false && !funded.has(input.workspaceId)) return refuse(noFunds('place calls'));
    return { ok: true, to, from };
  });
}

/** checkOutboundMany for one call: the numbers to dial with, or the refusal thrown. */
export async function checkOutbound(db: Executor, workspaceId: string, input: OutboundInput, options: OutboundOptions): Promise<{ to: string; from: string }> {
  const [verdict] = await checkOutboundMany(db, [{ ...input, workspaceId }], options);
  if (!verdict.ok) throw verdict.error;
  return { to: verdict.to, from: verdict.from };
}
