import type { Insertable } from 'kysely';
import { type CallRef, createCallJournal } from '../../src/modules/calls/journal.ts';
import type { CallRow } from '../../src/modules/calls/repo.ts';
import type { CallsTable, CallStatus } from '../../src/modules/calls/tables.ts';
import { manualClock } from '../../src/platform/clock.ts';
import type { Executor } from '../../src/platform/db/schema.ts';
import { newId } from '../../src/platform/ids.ts';
import type { AgentDestination, EmitInput, EventEmitter } from '../../src/platform/outbox/emit.ts';
import { createEventEmitter } from '../../src/platform/outbox/emitter.ts';
import { payloadOf, seedWorkspace, T0 } from './campaign-rows.ts';
import { testDatabase } from './database.ts';

// The calls tables written straight into the database, and a CallJournal built on this file's
// database with a manual clock and the real events engine (the transactional outbox): the
// journal's rule tests (src/modules/calls/journal*-rules.test.ts) read back the rows, the status
// history and the events the journal wrote, without the HTTP API or a live call.

export { seedWorkspace, T0 };

/** Per-minute rates of the rig: phone calls 90,000 micro-USD (1,500 a second), web voice 100,000 (1,666.67 a second: the cost is rounded). */
export const RATES = { callPerMinMicros: 90_000, webVoicePerMinMicros: 100_000 };

export const LINKS = {
  recordingUrl: (id: string) => `https://links.test/${id}/recording.mp3`,
  transcriptUrl: (id: string) => `https://links.test/${id}/transcript`,
};

/** An agent webhook that receives every call event: each event the journal emits is written. */
export function agentOf(agentId: string): AgentDestination {
  return { agentId, url: 'https://hooks.example.test/agent', secret: 'whsec_test', events: [] };
}

export interface JournalRigOptions {
  /** The manual clock's start (T0). */
  start?: Date;
  /** The per-minute rates (RATES). */
  rates?: typeof RATES;
  /** Sees each event as it is emitted, before the outbox writes it. */
  onEmit?: (input: EmitInput) => void;
  /** false: the journal is built without a post-call nudge, as a module that has none builds it. */
  nudgePostCall?: boolean;
}

/** A CallJournal on a database of this file, with a manual clock and the real events engine (the transactional outbox). */
export async function journalRig(options: JournalRigOptions = {}) {
  const database = await testDatabase();
  const clock = manualClock(options.start ?? T0);
  const engine = createEventEmitter({ clock, webhooks: { agentSchedule: [0], tenantSchedule: [0] }, notifyInTransaction: database.kind === 'postgres' });
  const { onEmit } = options;
  const events: EventEmitter = onEmit
    ? {
        emit(tx, input) {
          onEmit(input);
          return engine.emit(tx, input);
        },
        emitAlone: (executor, input) => engine.emitAlone(executor, input),
      }
    : engine;
  let nudges = 0;
  const nudgePostCall = options.nudgePostCall === false ? undefined : () => nudges++;
  const journal = createCallJournal({ db: database.db, database, clock, events, links: LINKS, rates: options.rates ?? RATES, nudgePostCall });
  return { database, db: database.db, clock, events, journal, nudges: () => nudges };
}

/** A workspace with a second agent of its own (`agent2`), and another workspace beside it: the reads' filters and isolation. */
export async function seedWorkspacePair(db: Executor) {
  const ws = await seedWorkspace(db);
  const other = await seedWorkspace(db);
  const agent2 = (await seedWorkspace(db)).agentId;
  await db.updateTable('agents').set({ workspace_id: ws.workspaceId }).where('id', '=', agent2).execute();
  return { ws, other, agent2 };
}

/** A call row in `status` (its history: that status, seq 1, at T0), with any other fields given. */
export async function insertCallRow(db: Executor, ws: { workspaceId: string; agentId: string }, status: CallStatus, fields: Partial<Insertable<CallsTable>> = {}): Promise<CallRow> {
  const row = {
    id: newId('call'),
    workspace_id: ws.workspaceId,
    agent_id: ws.agentId,
    direction: 'outbound' as const,
    from_number: '+15550001111',
    to_number: '+15550002222',
    status,
    provider: 'sandbox',
    created_at: T0,
    updated_at: T0,
    ...fields,
  };
  const inserted = (await db.insertInto('calls').values(row as Insertable<CallsTable>).returningAll().executeTakeFirstOrThrow()) as CallRow;
  await db.insertInto('call_status_events').values({ call_id: inserted.id, seq: 1, status, at: T0 }).execute();
  return inserted;
}

export function refOf(row: CallRow, traceParent?: string): CallRef {
  return { id: row.id, workspace_id: row.workspace_id, agent_id: row.agent_id, direction: row.direction, from_number: row.from_number, to_number: row.to_number, traceParent };
}

export function callOf(db: Executor, id: string): Promise<CallRow> {
  return db.selectFrom('calls').selectAll().where('id', '=', id).executeTakeFirstOrThrow() as Promise<CallRow>;
}

/** The call's status history, in order: [status, at ms]. */
export async function historyOf(db: Executor, id: string): Promise<Array<[number, CallStatus, number]>> {
  const rows = await db.selectFrom('call_status_events').selectAll().where('call_id', '=', id).orderBy('seq').execute();
  return rows.map((r) => [r.seq, r.status, new Date(r.at).getTime()]);
}

/** The events written for the call, in the order emitted (ids are monotonic), with their data and their delivery's trace. */
export async function eventsOf(db: Executor, callId: string) {
  const rows = await db.selectFrom('webhook_events').selectAll().where('call_id', '=', callId).orderBy('id').execute();
  const out = [];
  for (const row of rows) {
    const delivery = await db.selectFrom('webhook_deliveries').select(['trace_parent', 'agent_id']).where('event_id', '=', row.id).executeTakeFirstOrThrow();
    out.push({ type: row.type, data: payloadOf(row).data, workspaceId: row.workspace_id, agentId: row.agent_id, at: new Date(row.created_at).getTime(), traceParent: delivery.trace_parent });
  }
  return out;
}

export const ms = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string).getTime());
