import { sql } from 'kysely';
import { createDialogueEngine } from '../../engine/index.ts';
import type { KnowledgeSearch } from '../../engine/types.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { invalidField, invalidState, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Providers } from '../../ports/providers.ts';
import { loadCallAgent } from '../agents/call-agent.ts';
import { findAssignedNumber } from '../phone-numbers/repo.ts';
import type { CallJournal } from './journal.ts';
import { checkOutbound, phoneField as phone } from './preconditions.ts';
import type { CallRunner } from './runner.ts';
import type { InboundCallBody, OutboundCallBody } from './schemas-control.ts';
import type { CallRow } from './tables.ts';

// The operations that change a call: place one (queued for the dialer), hang up, transfer,
// re-run extraction, and the sandbox's inbound call. Reads are in repo.ts.

export interface CallsServiceDeps {
  db: Database;
  clock: Clock;
  journal: CallJournal;
  runner: CallRunner;
  providers: Providers;
  knowledge: KnowledgeSearch;
  leaseMs: number;
  /** Wakes the dialer after a call is queued. */
  nudge(): void;
}

const LIVE = ['ringing', 'in_progress'];

export function createCallsService(deps: CallsServiceDeps) {
  const { db, journal, runner } = deps;
  const { telephony } = deps.providers;

  async function callOf(workspaceId: string, id: string): Promise<CallRow> {
    const row = await db.selectFrom('calls').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('call');
    return row;
  }

  return {
    callOf,

    /** `traceParent`: the request's (WorkspaceContext.traceParent), continued by the dialer's run of the call. */
    async placeOutbound(workspaceId: string, body: OutboundCallBody, traceParent?: string): Promise<CallRow> {
      const { to, from } = await checkOutbound(db, workspaceId, body, { ownsCallerIds: telephony.ownsCallerIds });
      const row = await db.transaction().execute((tx) =>
        journal.queue(tx, {
          id: newId('call'),
          workspace_id: workspaceId,
          agent_id: body.agent_id,
          direction: 'outbound',
          from_number: from,
          to_number: to,
          provider: telephony.name,
          variables: body.variables ?? {},
          metadata: body.metadata ?? {},
          simulation: body.simulation ?? null,
          traceParent,
        }),
      );
      deps.nudge();
      return row;
    },

    /** A call to one of the workspace's numbers from a simulated caller: answered at once, run here. */
    async receiveSandboxCall(workspaceId: string, body: InboundCallBody, traceParent?: string): Promise<CallRow> {
      if (!telephony.inbound) throw invalidState('Inbound sandbox calls need TELEPHONY_PROVIDER=sandbox.');
      const to = phone(body.to, 'to');
      const from = phone(body.from, 'from');
      const number = await findAssignedNumber(db, to);
      if (!number || number.workspace_id !== workspaceId) throw invalidField('to', 'not a phone number of this workspace');
      if (!number.agent_id) throw invalidField('to', 'the number is not assigned to an agent');
      const id = newId('call');
      const row = await db.transaction().execute((tx) =>
        journal.queue(tx, {
          id,
          workspace_id: workspaceId,
          agent_id: number.agent_id as string,
          direction: 'inbound',
          from_number: from,
          to_number: to,
          provider: telephony.name,
          simulation: body.simulation ?? null,
          traceParent,
        }),
      );
      // Inbound calls are always answered (they count toward the live total, never wait).
      await journal.ring(row, runner.holder, deps.leaseMs);
      const ringing = await callOf(workspaceId, id);
      const agent = await loadCallAgent(db, workspaceId, number.agent_id as string);
      const media = telephony.acceptInbound({ callId: id, from, to, simulation: body.simulation ?? null, realTime: agent?.llm.provider === 'openai-realtime' });
      void runner.answer(ringing, media);
      return ringing;
    },

    async hangup(workspaceId: string, id: string): Promise<CallRow> {
      const call = await callOf(workspaceId, id);
      if (call.status === 'queued') {
        await journal.finish(call, null, { status: 'canceled', endReason: 'api_hangup', durationMs: 0 });
      } else if (LIVE.includes(call.status)) {
        // Run here: ended now. Run elsewhere: its owner applies the request at its next lease renewal.
        if (!runner.hangup(id)) await db.updateTable('calls').set({ control: JSON.stringify({ action: 'hangup' }) }).where('id', '=', id).execute();
      } else {
        throw invalidState(`The call has already ended (${call.status}).`);
      }
      return callOf(workspaceId, id);
    },

    async transfer(workspaceId: string, id: string, requested: string | undefined): Promise<CallRow> {
      const call = await callOf(workspaceId, id);
      if (call.status !== 'in_progress') throw invalidState(`Only a call in progress can be transferred (this one is ${call.status}).`);
      const agent = await loadCallAgent(db, workspaceId, call.agent_id);
      const target = requested ? phone(requested, 'to') : agent?.transfer_number;
      if (!target) throw invalidField('to', 'required: the agent has no transfer_number');
      if (!runner.transfer(id, target)) {
        await db.updateTable('calls').set({ control: JSON.stringify({ action: 'transfer', to: target }) }).where('id', '=', id).execute();
      }
      return callOf(workspaceId, id);
    },

    /** Runs extraction again on the stored transcript (after the agent's extraction_fields changed). */
    async analyze(workspaceId: string, id: string): Promise<CallRow> {
      const call = await callOf(workspaceId, id);
      if (LIVE.includes(call.status) || call.status === 'queued') throw invalidState('The call has not ended yet.');
      if (call.content_deleted_at) throw invalidState('The call\'s transcript was deleted.');
      const agent = await loadCallAgent(db, workspaceId, call.agent_id);
      if (!agent) throw invalidState('The call\'s agent was deleted.');
      const engine = createDialogueEngine({ llm: deps.providers.llmFor(agent.llm), knowledge: deps.knowledge, functions: { invoke: async () => ({ status: 0, body: null, duration_ms: 0 }) } });
      const transcript = (call.transcript as Array<{ role: 'agent' | 'user'; text: string }>).map((e) => ({ role: e.role, text: e.text }));
      const extracted = await engine.extract(agent, transcript);
      await db
        .updateTable('calls')
        // A re-run settles an analysis that had failed after the call (one still pending is the post-call job's).
        .set({ extracted: JSON.stringify(extracted), updated_at: deps.clock.now(), ...(call.analysis_status === 'failed' ? { analysis_status: 'ready' as const, analysis_error: null } : {}) })
        .where('id', '=', id)
        .where('workspace_id', '=', workspaceId)
        .execute();
      return callOf(workspaceId, id);
    },

    /** Live calls of the workspace (the phone-number release check uses the same rule). */
    async liveCount(workspaceId: string): Promise<number> {
      const row = await sql<{ n: number }>`select count(*)::integer as n from calls where workspace_id = ${workspaceId} and status in ('ringing', 'in_progress')`.execute(db);
      return row.rows[0]?.n ?? 0;
    },
  };
}

export type CallsService = ReturnType<typeof createCallsService>;
