import { type Selectable, sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Executor } from '../../platform/db/schema.ts';
import type { AgentDestination, EventEmitter } from '../../platform/outbox/emit.ts';
import type { SessionOutcome, TranscriptEntry } from '../../runtime/outcome.ts';
import { createWalletRepo } from '../wallet/repo.ts';
import type { CallDirection, CallSimulation, CallsTable, CallStatus, EndReason } from './tables.ts';

// The CallJournal: the only writer of `calls` and `call_status_events`. Every state change is one
// short transaction that checks the transition is legal (a terminal state never changes), appends
// the state history and emits the call's events (transactional outbox). No network I/O inside.

/** Legal transitions: to → the states it may come from. */
const FROM: Record<CallStatus, CallStatus[]> = {
  queued: [],
  ringing: ['queued'],
  in_progress: ['ringing'],
  completed: ['in_progress'],
  transferred: ['in_progress'],
  voicemail: ['in_progress'],
  failed: ['queued', 'ringing', 'in_progress'],
  busy: ['ringing'],
  no_answer: ['ringing'],
  canceled: ['queued', 'ringing'],
};

/** Listing-B event of a terminal state (canceled calls get none). */
const OUTCOME_EVENT: Partial<Record<CallStatus, string>> = {
  completed: 'call.completed',
  voicemail: 'call.completed',
  transferred: 'call.transferred',
  busy: 'call.failed',
  no_answer: 'call.failed',
  failed: 'call.failed',
};

export interface CallLinks {
  recordingUrl(callId: string): string;
  transcriptUrl(callId: string): string;
}

export interface JournalDeps {
  db: Database;
  clock: Clock;
  events: EventEmitter;
  links: CallLinks;
  /** Phone call and web voice rates, micro-USD per minute. */
  rates: { callPerMinMicros: number; webVoicePerMinMicros: number };
}

export interface CallRef {
  id: string;
  workspace_id: string;
  agent_id: string;
  direction: string;
  from_number: string | null;
  to_number: string | null;
}

export interface NewCall {
  id: string;
  workspace_id: string;
  agent_id: string;
  direction: CallDirection;
  from_number: string | null;
  to_number: string | null;
  provider: string;
  variables?: Record<string, string>;
  metadata?: Record<string, unknown>;
  simulation?: CallSimulation | null;
  campaign_id?: string | null;
  schedule_id?: string | null;
}

export interface FinishInput {
  status: CallStatus;
  endReason: EndReason;
  /** Connected time in the call's clock ms (0 for calls never answered). */
  durationMs: number;
  transcript?: TranscriptEntry[];
  latency?: SessionOutcome['latency'];
  extracted?: Record<string, unknown>;
  transferredTo?: string | null;
  error?: { code: string; message: string } | null;
  recording?: { key: string; bytes: number } | null;
  /** Only while this holder owns the call (null: whoever owns it, e.g. a queued call). */
  holder?: string | null;
  /** Only while the call's lease expired before this time (ending a call whose process died). */
  leaseExpiredBefore?: Date;
  /** Also send `error` as `call.error`, before `call.ended`, in the same transaction. */
  emitError?: boolean;
  /** Only from these states (a campaign cancels its calls still `queued`, never one a worker just claimed). */
  onlyFrom?: CallStatus[];
}

/** Billed seconds are started seconds; cost is billed seconds at the per-minute rate. */
export function callCost(durationMs: number, perMinMicros: number): { billedSeconds: number; costMicros: number } {
  const billedSeconds = durationMs > 0 ? Math.ceil(durationMs / 1000) : 0;
  return { billedSeconds, costMicros: Math.round((billedSeconds * perMinMicros) / 60) };
}

/** What a call ended with, for the modules that keep something beside it (voice sessions). */
export interface FinishedCall {
  status: CallStatus;
  endReason: EndReason;
  durationMs: number;
  billedSeconds: number;
  costMicros: number;
  endedAt: Date;
}

/** Runs inside the finishing transaction, after the call's own writes (no network I/O). */
export type FinishHook = (tx: Executor, call: CallRef, finished: FinishedCall) => Promise<void>;

export function createCallJournal(deps: JournalDeps) {
  const { db, clock, events } = deps;
  const finishHooks: FinishHook[] = [];
  const wallet = createWalletRepo({ events });

  async function appendStatus(tx: Executor, callId: string, status: CallStatus, at: Date) {
    await sql`insert into call_status_events (call_id, seq, status, at)
      select ${callId}, coalesce(max(seq), 0) + 1, ${status}, ${at} from call_status_events where call_id = ${callId}`.execute(tx);
  }

  function emit(tx: Executor, call: CallRef, agent: AgentDestination | null, type: string, data: Record<string, unknown>) {
    return events.emit(tx, { workspaceId: call.workspace_id, type, data, callId: call.id, agentId: call.agent_id, agent });
  }

  function emitAlone(call: CallRef, agent: AgentDestination | null, type: string, data: Record<string, unknown>) {
    return events.emitAlone(db, { workspaceId: call.workspace_id, type, data, callId: call.id, agentId: call.agent_id, agent });
  }

  /** Moves the call to `status` if the transition is legal (and the holder still owns it); false otherwise. */
  async function move(tx: Executor, call: CallRef, status: CallStatus, set: Record<string, unknown>, holder?: string | null, expiredBefore?: Date, onlyFrom?: CallStatus[]): Promise<boolean> {
    const now = clock.now();
    const from = onlyFrom ? FROM[status].filter((s) => onlyFrom.includes(s)) : FROM[status];
    if (from.length === 0) return false;
    let query = tx
      .updateTable('calls')
      .set({ ...set, status, updated_at: now })
      .where('id', '=', call.id)
      .where('status', 'in', from);
    if (holder) query = query.where('lease_holder', '=', holder);
    if (expiredBefore) query = query.where('lease_expires_at', '<', expiredBefore);
    const moved = await query.executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) return false;
    await appendStatus(tx, call.id, status, now);
    return true;
  }

  /** New calls in `queued`, inside the caller's transaction: two statements however many (rows in order). */
  async function queueMany(tx: Executor, calls: NewCall[]): Promise<Array<Selectable<CallsTable>>> {
    if (calls.length === 0) return [];
    const now = clock.now();
    const inserted = await tx
      .insertInto('calls')
      .values(
        calls.map((call) => ({
          id: call.id,
          workspace_id: call.workspace_id,
          agent_id: call.agent_id,
          direction: call.direction,
          from_number: call.from_number,
          to_number: call.to_number,
          provider: call.provider,
          status: 'queued' as const,
          variables: JSON.stringify(call.variables ?? {}),
          metadata: JSON.stringify(call.metadata ?? {}),
          simulation: call.simulation ? JSON.stringify(call.simulation) : null,
          campaign_id: call.campaign_id ?? null,
          schedule_id: call.schedule_id ?? null,
          transcript: JSON.stringify([]),
          extracted: JSON.stringify({}),
          created_at: now,
          updated_at: now,
        })),
      )
      .returningAll()
      .execute();
    // A new call's history starts here: `queued` is its first entry.
    await tx.insertInto('call_status_events').values(calls.map((call) => ({ call_id: call.id, seq: 1, status: 'queued' as const, at: now }))).execute();
    const byId = new Map(inserted.map((row) => [row.id, row]));
    return calls.map((call) => byId.get(call.id) as Selectable<CallsTable>);
  }

  return {
    /** Registers a hook run in every finishing transaction (a module's own rows beside the call). */
    onFinish(hook: FinishHook): void {
      finishHooks.push(hook);
    },

    /** A new call in `queued` (its first state), inside the caller's transaction. */
    async queue(tx: Executor, call: NewCall): Promise<Selectable<CallsTable>> {
      const [inserted] = await queueMany(tx, [call]);
      return inserted;
    },

    /** New calls in `queued`, inside the caller's transaction (a batch of due schedules). */
    queueMany,

    /** queued → ringing for a call this process will run now (inbound calls, which never wait). */
    async ring(call: CallRef, holder: string, leaseMs: number): Promise<boolean> {
      const now = clock.now();
      return db.transaction().execute((tx) =>
        move(tx, call, 'ringing', { lease_holder: holder, lease_expires_at: new Date(now.getTime() + leaseMs), last_renewed_at: now, started_at: now }),
      );
    },

    /** ringing → in_progress: `call.started`. */
    async answered(call: CallRef, agent: AgentDestination | null, holder: string): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const now = clock.now();
        if (!(await move(tx, call, 'in_progress', { answered_at: now }, holder))) return false;
        await emit(tx, call, agent, 'call.started', { direction: call.direction, from: call.from_number, to: call.to_number });
        return true;
      });
    },

    /** One transcript line as `call.transcript` (no row of the call changes: written only when someone listens). */
    async transcript(call: CallRef, agent: AgentDestination | null, entry: TranscriptEntry, turn: number) {
      await emitAlone(call, agent, 'call.transcript', { role: entry.role, text: entry.text, start_ms: entry.start_ms, end_ms: entry.end_ms, turn });
    },

    async transfer(call: CallRef, agent: AgentDestination | null, to: string, reason: string) {
      await emitAlone(call, agent, 'call.transfer', { to, reason });
    },

    async error(call: CallRef, agent: AgentDestination | null, code: string, message: string) {
      await db.transaction().execute((tx) => emit(tx, call, agent, 'call.error', { code, message: message.slice(0, 500) }));
    },

    /**
     * The terminal state, in one transaction: the row, its history, the `call` ledger row and the
     * call's last events (`call.ended`, then the listing-B outcome). False when the call had already
     * ended (or this holder lost it): nothing is written twice.
     */
    async finish(call: CallRef, agent: AgentDestination | null, input: FinishInput): Promise<boolean> {
      const rate = call.direction === 'web' ? deps.rates.webVoicePerMinMicros : deps.rates.callPerMinMicros;
      const { billedSeconds, costMicros } = callCost(input.durationMs, rate);
      const answered = input.durationMs > 0 || input.transcript !== undefined;
      return db.transaction().execute(async (tx) => {
        const now = clock.now();
        const set: Record<string, unknown> = {
          end_reason: input.endReason,
          ended_at: now,
          duration_ms: answered ? input.durationMs : 0,
          billed_seconds: billedSeconds,
          cost_micros: costMicros,
          lease_holder: null,
          lease_expires_at: null,
          control: null,
          transferred_to: input.transferredTo ?? null,
          error: input.error ? JSON.stringify(input.error) : null,
        };
        if (input.transcript) set.transcript = JSON.stringify(input.transcript);
        if (input.latency !== undefined) set.latency = input.latency ? JSON.stringify(input.latency) : null;
        if (input.extracted) set.extracted = JSON.stringify(input.extracted);
        if (input.recording) {
          set.recording_key = input.recording.key;
          set.recording_bytes = input.recording.bytes;
        }
        if (!(await move(tx, call, input.status, set, input.holder, input.leaseExpiredBefore, input.onlyFrom))) return false;
        if (input.emitError && input.error) await emit(tx, call, agent, 'call.error', input.error);
        for (const hook of finishHooks) {
          await hook(tx, call, { status: input.status, endReason: input.endReason, durationMs: answered ? input.durationMs : 0, billedSeconds, costMicros, endedAt: now });
        }
        if (costMicros > 0) {
          await wallet.applyEntry(tx, {
            workspaceId: call.workspace_id,
            type: call.direction === 'web' ? 'voice_session' : 'call',
            amountMicros: -costMicros,
            description: `${call.direction} call, ${billedSeconds} s`,
            referenceId: call.id,
            now,
          });
        }
        const recordingUrl = input.recording ? deps.links.recordingUrl(call.id) : null;
        await emit(tx, call, agent, 'call.ended', {
          duration_ms: answered ? input.durationMs : 0,
          status: input.status,
          end_reason: input.endReason,
          transcript_url: deps.links.transcriptUrl(call.id),
          recording_url: recordingUrl,
          cost_usd: costMicros / 1e6,
          latency: input.latency ?? null,
        });
        const outcome = OUTCOME_EVENT[input.status];
        const base = { call_id: call.id, agent_id: call.agent_id, from: call.from_number, to: call.to_number };
        if (outcome === 'call.completed') {
          const text = (input.transcript ?? []).map((e) => `${e.role}: ${e.text}`).join('\n');
          await emit(tx, call, agent, outcome, { ...base, duration_seconds: billedSeconds, transcript: text, extracted: input.extracted ?? {} });
        } else if (outcome === 'call.transferred') {
          await emit(tx, call, agent, outcome, { ...base, transferred_to: input.transferredTo ?? null, reason: input.endReason });
        } else if (outcome === 'call.failed') {
          await emit(tx, call, agent, outcome, { ...base, status: input.status, end_reason: input.endReason });
        }
        return true;
      });
    },

    /**
     * Binds a ringing call to the provider's call id and keeps the SHA-256 of the single-use token
     * its media stream will present; false when the call is not ringing any more.
     */
    async expectStream(callId: string, providerCallId: string, tokenHash: string): Promise<boolean> {
      const set = await db
        .updateTable('calls')
        .set({ provider_call_id: providerCallId, stream_token_hash: tokenHash, updated_at: clock.now() })
        .where('id', '=', callId)
        .where('status', '=', 'ringing')
        .executeTakeFirst();
      return Number(set.numUpdatedRows) === 1;
    },

    /**
     * The media stream of a ringing call presented its token: the token is spent and this holder
     * takes the call's lease (the call runs where its media arrives). Undefined when the token is
     * wrong, already used, or the call is no longer ringing.
     */
    async claimStream(callId: string, tokenHash: string, providerCallId: string, holder: string, leaseMs: number) {
      const now = clock.now();
      return db
        .updateTable('calls')
        .set({ stream_token_hash: null, lease_holder: holder, lease_expires_at: new Date(now.getTime() + leaseMs), last_renewed_at: now, updated_at: now })
        .where('id', '=', callId)
        .where('stream_token_hash', '=', tokenHash)
        .where('provider_call_id', '=', providerCallId)
        .where('status', '=', 'ringing')
        .returningAll()
        .executeTakeFirst();
    },

    /** Extends the leases of this holder's live calls; answers the controls asked for by other instances. */
    async renew(holder: string, callIds: string[], leaseMs: number) {
      if (callIds.length === 0) return [];
      const now = clock.now();
      return db
        .updateTable('calls')
        .set({ lease_expires_at: new Date(now.getTime() + leaseMs), last_renewed_at: now })
        .where('id', 'in', callIds)
        .where('lease_holder', '=', holder)
        .where('status', 'in', ['ringing', 'in_progress'])
        .returning(['id', 'control'])
        .execute();
    },
  };
}

export type CallJournal = ReturnType<typeof createCallJournal>;
