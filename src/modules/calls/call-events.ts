import type { Database, Executor } from '../../platform/db/schema.ts';
import type { AgentDestination, EmitInput, EventEmitter } from '../../platform/outbox/emit.ts';
import { type CallLinks, endEventsOf } from './end-events.ts';
import type { CallRow } from './repo.ts';

// The call journal's events (journal.ts): each names its call, the call's workspace and agent, and
// joins the trace of the work acting on the call. Queued in the journal's transaction (emit), in a
// short transaction of their own for the events of a live call (emitAlone), or, once the post-call
// work has settled, call.ended and the outcome from the row (emitEnd).

/** What an event needs of its call. */
export interface CallEventRef {
  id: string;
  workspace_id: string;
  agent_id: string;
  /** The W3C traceparent of the work acting on the call. */
  traceParent?: string | null;
}

export function createCallEvents(deps: { db: Database; events: EventEmitter; links: CallLinks }) {
  const { db, events } = deps;
  const input = (call: CallEventRef, agent: AgentDestination | null, type: string, data: Record<string, unknown>): EmitInput => ({
    workspaceId: call.workspace_id,
    type,
    data,
    callId: call.id,
    agentId: call.agent_id,
    agent,
    traceParent: call.traceParent,
  });

  return {
    emit(tx: Executor, call: CallEventRef, agent: AgentDestination | null, type: string, data: Record<string, unknown>) {
      return events.emit(tx, input(call, agent, type, data));
    },

    emitAlone(call: CallEventRef, agent: AgentDestination | null, type: string, data: Record<string, unknown>) {
      return events.emitAlone(db, input(call, agent, type, data));
    },

    /** call.ended and the listing-B outcome of an ended call, from its row (recording, extraction and all). */
    async emitEnd(tx: Executor, row: CallRow & Pick<CallEventRef, 'traceParent'>, agent: AgentDestination | null) {
      for (const event of endEventsOf(row, deps.links)) await events.emit(tx, input(row, agent, event.type, event.data));
    },
  };
}
