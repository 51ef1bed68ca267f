import type { DialogueEngine } from '../../engine/types.ts';
import { type EngineAgent, LlmError } from '../../ports/llm.ts';
import type { TelephonyCapabilities } from '../../ports/telephony.ts';
import type { Database } from '../../platform/db/schema.ts';
import { AppError, invalidField } from '../../platform/errors.ts';
import { toE164 } from '../../platform/phone.ts';
import { loadCallAgent, type RunnableAgent } from '../agents/call-agent.ts';
import type { CallsService } from '../calls/service.ts';
import { type DemoIds, findDemo } from './bootstrap.ts';
import type { DemoCall, DemoChatReply } from './schemas.ts';

// The public demo with the demo agent: a call placed exactly as POST /v1/calls/outbound places one
// (the same service: do-not-call list, funds, the dialer), paid from the demo workspace's wallet;
// and one stateless chat turn through the dialogue engine, as POST /v1/agents/{id}/chat runs it.

export interface DemoServiceDeps {
  db: Database;
  calls: Pick<CallsService, 'placeOutbound'>;
  /** Simulated: the demo says so; owning caller ids: the demo calls from one of its workspace's numbers. */
  telephony: Pick<TelephonyCapabilities, 'simulated' | 'ownsCallerIds'>;
  /** Makes the demo (idempotent): used when the start-up bootstrap has not (yet) made it. */
  bootstrap(): Promise<DemoIds>;
  /** The dialogue engine for the demo agent (the same construction as the agents' chat). */
  engineFor(agent: RunnableAgent): DialogueEngine;
}

export function createDemoService(deps: DemoServiceDeps) {
  const { db } = deps;

  async function demo(): Promise<{ ids: DemoIds; agent: RunnableAgent }> {
    const ids = (await findDemo(db)) ?? (await deps.bootstrap());
    const agent = ids ? await loadCallAgent(db, ids.workspaceId, ids.agentId) : undefined;
    if (!agent) throw new AppError('service_unavailable', 'The demo agent is missing on this server; it is made again at the next start-up.');
    return { ids, agent };
  }

  /** With a carrier the caller id must be a number of the demo workspace (the sandbox provides its own). */
  async function callerId(workspaceId: string): Promise<string | undefined> {
    if (!deps.telephony.ownsCallerIds) return undefined;
    const number = await db.selectFrom('phone_numbers').select('number').where('workspace_id', '=', workspaceId).orderBy('id', 'asc').executeTakeFirst();
    if (!number) throw new AppError('service_unavailable', 'Demo calls are not available: the demo workspace has no phone number to call from.');
    return number.number;
  }

  return {
    async call(phone: string): Promise<DemoCall> {
      const to = toE164(phone);
      if (!to) throw invalidField('phone', 'must be a possible phone number (E.164, e.g. +15550100200)');
      const { ids, agent } = await demo();
      const from = await callerId(ids.workspaceId);
      const row = await deps.calls.placeOutbound(ids.workspaceId, { agent_id: ids.agentId, to, ...(from ? { from } : {}), metadata: { demo: true } }).catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'insufficient_balance') {
          throw new AppError('insufficient_balance', 'The demo\'s call budget is used up for now; try the demo chat, or sign up to place calls of your own.');
        }
        if (error instanceof AppError && error.code === 'do_not_call') throw new AppError('do_not_call', `${to} asked not to be called by the demo.`);
        throw error;
      });
      return { call_id: row.id, status: row.status, sandbox: deps.telephony.simulated, max_duration_seconds: agent.max_duration_seconds };
    },

    async chat(message: string): Promise<DemoChatReply> {
      const { ids, agent } = await demo();
      const engine = deps.engineFor(agent);
      const engineAgent: EngineAgent = agent;
      // Stateless: each request is the greeting and this one message.
      const result = await engine
        .respond({ workspaceId: ids.workspaceId, agent: engineAgent, history: [engine.greet(engineAgent, {})], userText: message, variables: {} })
        .catch((error: unknown) => {
          if (error instanceof LlmError) throw new AppError('upstream_error', `the language model did not answer: ${error.message}`);
          throw error;
        });
      return { reply: result.reply, ended: result.ended };
    },
  };
}

export type DemoService = ReturnType<typeof createDemoService>;
