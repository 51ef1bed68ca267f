import { type Selectable, sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import type { Database, Executor } from '../../platform/db/schema.ts';
import type { AgentDestination, EventEmitter } from '../../platform/outbox/emit.ts';
import type { SessionOutcome, TranscriptEntry } from '../../runtime/outcome.ts';
import { createWalletRepo } from '../wallet/repo.ts';
import { claimPostCalls, type PostCallFence, renewPostCall, retryPostCall, updateFenced } from './post-call-sql.ts';
import type { CallRow } from './repo.ts';
import { createCallEvents } from './call-events.ts';
import type { CallLinks } from './end-events.ts';
import type { CallDirection, CallSimulation, CallsTable, CallStatus, EndReason } from './tables.ts';

// The CallJournal: the only writer of `calls` and `call_status_events`. Every state change is one
// short transaction that checks the transition is legal (a terminal state never changes), appends
// the state history and emits the call's events (transactional outbox). No network I/O inside.
// The end of a call is two steps (DESIGN part 9): `finish` makes the status terminal (billing, the
// slot freed) and queues the post-call job on the row; the job's writes (recording, analysis)
// come back here, and `endPostCall` emits call.ended and the outcome event, once.

/** The NOTIFY channel of the post-call job (PostgreSQL: every instance's worker wakes). */
export const POST_CALL_CHANNEL = 'vap_post_call';

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

export type { CallLinks };

export interface JournalDeps {
  db: Database;
  /** The handle behind `db` (the post-call job's worker statements). */
  database: DatabaseHandle;
  /** Wakes this process's post-call job after a finish commits. */
  nudgePostCall?: () => void;
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
  /** The W3C traceparent of the work acting on the call (its run's span): the events emitted join that trace. */
  traceParent?: string | null;
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
  /** The W3C traceparent of the request (or job) queueing the call: the dialer's run of it continues that trace. */
  traceParent?: string | null;
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
  /** Samples of the raw tracks written to the BlobStore (the post-call job makes the MP3); 0 or absent: no recording. */
  recordingSamples?: number;
  /** The raw tracks could not be written: the recording failed. */
  recordingError?: string | null;
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

  const { emit, emitAlone, emitEnd } = createCallEvents({ db, events, links: deps.links });

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
          trace_parent: call.traceParent ?? null,
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
     * The terminal state, in one transaction: the row, its history, the `call` ledger row, and the
     * post-call job queued on the row (recording, analysis, then call.ended and the outcome event,
     * see endPostCall). False when the call had already ended (or this holder lost it): nothing is
     * written twice.
     */
    async finish(call: CallRef, agent: AgentDestination | null, input: FinishInput): Promise<boolean> {
      const rate = call.direction === 'web' ? deps.rates.webVoicePerMinMicros : deps.rates.callPerMinMicros;
      // A clock that stepped back between answer and end must not store a negative length.
      const durationMs = Math.max(0, input.durationMs);
      const { billedSeconds, costMicros } = callCost(durationMs, rate);
      const samples = input.recordingSamples ?? 0;
      const done = await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const set: Record<string, unknown> = {
          end_reason: input.endReason,
          ended_at: now,
          duration_ms: durationMs,
          billed_seconds: billedSeconds,
          cost_micros: costMicros,
          lease_holder: null,
          lease_expires_at: null,
          control: null,
          transferred_to: input.transferredTo ?? null,
          error: input.error ? JSON.stringify(input.error) : null,
          recording_status: samples > 0 ? 'pending' : input.recordingError ? 'failed' : null,
          recording_samples: samples > 0 ? samples : null,
          recording_error: samples > 0 ? null : (input.recordingError ?? null),
          analysis_status: input.transcript !== undefined ? 'pending' : null,
          post_call_due_at: now,
          post_call_attempts: 0,
        };
        if (input.transcript) set.transcript = JSON.stringify(input.transcript);
        if (input.latency !== undefined) set.latency = input.latency ? JSON.stringify(input.latency) : null;
        if (!(await move(tx, call, input.status, set, input.holder, input.leaseExpiredBefore, input.onlyFrom))) return false;
        if (input.emitError && input.error) await emit(tx, call, agent, 'call.error', input.error);
        for (const hook of finishHooks) {
          await hook(tx, call, { status: input.status, endReason: input.endReason, durationMs, billedSeconds, costMicros, endedAt: now });
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
        if (deps.database.kind === 'postgres') await sql`select pg_notify(${POST_CALL_CHANNEL}, '')`.execute(tx);
        return true;
      });
      if (done) deps.nudgePostCall?.();
      return done;
    },

    /** Calls whose post-call work is due, leased to `holder` (the attempt counted). */
    claimPostCalls(input: { holder: string; leaseMs: number; limit: number }): Promise<CallRow[]> {
      return claimPostCalls(deps.database, { ...input, now: clock.now() });
    },

    /** Extends a running post-call attempt's lease; false when it was lost. */
    renewPostCall(fence: PostCallFence, leaseMs: number): Promise<boolean> {
      return renewPostCall(deps.database, fence, { now: clock.now(), leaseMs });
    },

    /** The MP3 is stored: recording ready. False when this attempt lost its lease. */
    recordingStored(fence: PostCallFence, recording: { key: string; bytes: number }): Promise<boolean> {
      const set = { recording_status: 'ready', recording_key: recording.key, recording_bytes: recording.bytes, recording_error: null };
      return updateFenced(db, fence, set, clock.now());
    },

    /** Extraction done: analysis ready with what it extracted. */
    analysisDone(fence: PostCallFence, extracted: Record<string, unknown>): Promise<boolean> {
      return updateFenced(db, fence, { analysis_status: 'ready', extracted: JSON.stringify(extracted), analysis_error: null }, clock.now());
    },

    /** A step failed; the job tries again at `dueAt`. */
    retryPostCall(fence: PostCallFence, input: { dueAt: Date; attempts: number; recordingError?: string; analysisError?: string }): Promise<boolean> {
      return retryPostCall(deps.database, fence, { ...input, now: clock.now() });
    },

    /**
     * The post-call work has settled: the steps still failing are `failed` (retries exhausted),
     * and call.ended and the listing-B outcome are emitted, in one transaction, once: fenced by
     * the lease and by ended_event_at; the events join `traceParent` (the attempt's span).
     */
    async endPostCall(fence: PostCallFence, agent: AgentDestination | null, failures: { recording?: string; analysis?: string } = {}, traceParent?: string | null): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const now = clock.now();
        const set: Record<string, unknown> = { ended_event_at: now, post_call_due_at: null, post_call_lease_holder: null, post_call_lease_expires_at: null };
        if (failures.recording) Object.assign(set, { recording_status: 'failed', recording_error: failures.recording.slice(0, 500) });
        if (failures.analysis) Object.assign(set, { analysis_status: 'failed', analysis_error: failures.analysis.slice(0, 500) });
        if (!(await updateFenced(tx, fence, set, now))) return false;
        const row = await tx.selectFrom('calls').selectAll().where('id', '=', fence.id).executeTakeFirstOrThrow();
        await emitEnd(tx, { ...row, traceParent }, agent);
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
    async renew(holder: string, calls: Array<{ id: string; elapsedMs: number }>, leaseMs: number) {
      if (calls.length === 0) return [];
      const now = clock.now();
      // Each call's length on its own clock, in the same statement.
      const elapsed = sql<number>`case ${sql.join(
        calls.map((c) => sql`when id = ${c.id} then ${Math.round(c.elapsedMs)}::integer`),
        sql` `,
      )} else live_elapsed_ms end`;
      return db
        .updateTable('calls')
        .set({ lease_expires_at: new Date(now.getTime() + leaseMs), last_renewed_at: now, live_elapsed_ms: elapsed })
        .where(
          'id',
          'in',
          calls.map((c) => c.id),
        )
        .where('lease_holder', '=', holder)
        .where('status', 'in', ['ringing', 'in_progress'])
        .returning(['id', 'control'])
        .execute();
    },
  };
}

export type CallJournal = ReturnType<typeof createCallJournal>;
