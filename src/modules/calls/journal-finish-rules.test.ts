import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { agentOf, callOf, eventsOf, historyOf, insertCallRow, journalRig, ms, refOf, seedWorkspace, T0 } from '../../../test/support/call-rows.ts';
import { eventDataOf, insertTenantEndpoint } from '../../../test/support/campaign-rows.ts';
import type { Executor } from '../../platform/db/schema.ts';
import type { CallRef, FinishedCall } from './journal.ts';
import type { CallDirection } from './tables.ts';

// The end of a call (journal.ts `finish`), on the real database with a manual clock and the real
// events engine: billed started seconds and the cost at the direction's rate, the wallet's ledger
// row and balance, every field the terminal row gets, the post-call job queued on the row, the
// fences (holder, lease expired before, only from), the finish hooks in the same transaction
// (rolled back with it), and nothing written twice.

const { db, clock, journal, nudges } = await journalRig();
// Rates of the rig (call-rows.ts RATES): 1,500 micro-USD a second for a phone call, 1,666.67 for web voice (1 s: 1,667; 2 s: 3,333).

const hooked: Array<{ tx: Executor; call: CallRef; finished: FinishedCall; status: string }> = [];
let failHook = false;
journal.onFinish(async (tx, call, finished) => {
  // Reads the row in the finishing transaction: the call's own writes are already there.
  const row = await tx.selectFrom('calls').select('status').where('id', '=', call.id).executeTakeFirstOrThrow();
  hooked.push({ tx, call, finished, status: row.status });
  await sql`update wallets set threshold_micros = threshold_micros + 1 where workspace_id = ${call.workspace_id}`.execute(tx);
  if (failHook) throw new Error('the hook failed');
});
const second: string[] = [];
journal.onFinish(async (_tx, call) => {
  second.push(call.id);
});

async function walletOf(workspaceId: string) {
  const wallet = await db.selectFrom('wallets').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  const ledger = await db.selectFrom('wallet_transactions').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute();
  return { balance: Number(wallet.balance_micros), threshold: Number(wallet.threshold_micros), ledger };
}

async function liveCall(direction: CallDirection = 'outbound', balance = 1_000_000) {
  const ws = await seedWorkspace(db, balance);
  const row = await insertCallRow(db, ws, 'in_progress', { direction, lease_holder: 'A', lease_expires_at: new Date(T0.getTime() + 10_000), last_renewed_at: T0, control: JSON.stringify({ action: 'hangup' }) });
  return { ws, row };
}

describe('finish: billing', () => {
  const cases: Array<[CallDirection, number, number, number, string]> = [
    ['outbound', 1000, 1, 1500, 'call'],
    ['outbound', 1001, 2, 3000, 'call'],
    ['inbound', 59_001, 60, 90_000, 'call'],
    ['web', 1000, 1, 1667, 'voice_session'],
    ['web', 1001, 2, 3333, 'voice_session'],
  ];
  for (const [direction, durationMs, seconds, cost, type] of cases) {
    it(`${direction}, ${durationMs} ms: ${seconds} s billed, ${cost} micro-USD debited as a ${type} row`, async () => {
      const { ws, row } = await liveCall(direction);
      clock.advance(60_000);
      assert.equal(await journal.finish(refOf(row), null, { status: 'completed', endReason: 'caller_goodbye', durationMs, holder: 'A' }), true);
      const after = await callOf(db, row.id);
      assert.deepEqual([after.duration_ms, after.billed_seconds, Number(after.cost_micros)], [durationMs, seconds, cost]);
      const wallet = await walletOf(ws.workspaceId);
      assert.equal(wallet.balance, 1_000_000 - cost);
      assert.equal(wallet.ledger.length, 1);
      const [entry] = wallet.ledger;
      assert.deepEqual(
        [entry.type, Number(entry.amount_micros), Number(entry.balance_after_micros), entry.description, entry.reference_id, ms(entry.created_at)],
        [type, -cost, 1_000_000 - cost, `${direction} call, ${seconds} s`, row.id, clock.now().getTime()],
      );
    });
  }

  it('a call never connected costs nothing: no ledger row, 0 s, 0 ms (a negative length too)', async () => {
    for (const durationMs of [0, -5]) {
      const { ws, row } = await liveCall();
      assert.equal(await journal.finish(refOf(row), null, { status: 'failed', endReason: 'failed_to_connect', durationMs }), true);
      const after = await callOf(db, row.id);
      assert.deepEqual([after.duration_ms, after.billed_seconds, Number(after.cost_micros)], [0, 0, 0]);
      const wallet = await walletOf(ws.workspaceId);
      assert.deepEqual([wallet.balance, wallet.ledger.length], [1_000_000, 0]);
    }
  });

  it('a debit that takes the balance below the threshold sends wallet.low_balance, once, to the workspace', async () => {
    const ws = await seedWorkspace(db, 2000);
    // The file's first hook raises the threshold by 1 before the debit: 1,001 when it is applied.
    await db.updateTable('wallets').set({ threshold_micros: 1000 }).where('workspace_id', '=', ws.workspaceId).execute();
    await insertTenantEndpoint(db, ws.workspaceId, ['wallet.low_balance']);
    const lowBalance = () => eventDataOf(db, ws.workspaceId, 'wallet.low_balance');
    for (const expected of [1, 1]) {
      const row = await insertCallRow(db, ws, 'in_progress');
      assert.equal(await journal.finish(refOf(row), null, { status: 'completed', endReason: 'customer_hangup', durationMs: 1000 }), true);
      assert.equal((await lowBalance()).length, expected);
    }
    assert.deepEqual(await lowBalance(), [{ balance_usd: 0.0005, threshold_usd: 0.001001 }]);
  });

  it('a negative length with a transcript (the clock stepped back) is stored as 0 ms, billed nothing', async () => {
    const { ws, row } = await liveCall();
    const transcript = [{ role: 'agent' as const, text: 'Hello', start_ms: 0, end_ms: 500 }];
    assert.equal(await journal.finish(refOf(row), null, { status: 'completed', endReason: 'customer_hangup', durationMs: -1500, transcript }), true);
    const after = await callOf(db, row.id);
    assert.deepEqual([after.duration_ms, after.billed_seconds, Number(after.cost_micros), after.analysis_status], [0, 0, 0, 'pending']);
    assert.deepEqual((await walletOf(ws.workspaceId)).ledger.length, 0);
  });
});

describe('finish: the terminal row', () => {
  it('ended now, the reason, the lease and control cleared, the post-call job due now', async () => {
    const { row } = await liveCall();
    clock.advance(5000);
    const transcript = [{ role: 'agent' as const, text: 'Hello', start_ms: 0, end_ms: 500 }];
    const latency = { turns: 1 } as never;
    const error = { code: 'llm_error', message: 'boom' };
    const input = { status: 'transferred' as const, endReason: 'transferred' as const, durationMs: 4200, transcript, latency, transferredTo: '+15557770000', error, recordingSamples: 48_000, holder: 'A' };
    assert.equal(await journal.finish(refOf(row), null, input), true);
    const after = await callOf(db, row.id);
    const now = clock.now().getTime();
    assert.deepEqual(
      {
        status: after.status, end_reason: after.end_reason, ended_at: ms(after.ended_at), updated_at: ms(after.updated_at), lease_holder: after.lease_holder,
        lease_expires_at: after.lease_expires_at, control: after.control, transferred_to: after.transferred_to, error: after.error, transcript: after.transcript, latency: after.latency,
        recording_status: after.recording_status, recording_samples: after.recording_samples, recording_error: after.recording_error, analysis_status: after.analysis_status,
        post_call_due_at: ms(after.post_call_due_at), post_call_attempts: after.post_call_attempts, ended_event_at: after.ended_event_at,
      },
      {
        status: 'transferred', end_reason: 'transferred', ended_at: now, updated_at: now, lease_holder: null, lease_expires_at: null, control: null, transferred_to: '+15557770000',
        error, transcript, latency: { turns: 1 }, recording_status: 'pending', recording_samples: 48_000, recording_error: null, analysis_status: 'pending',
        post_call_due_at: now, post_call_attempts: 0, ended_event_at: null,
      },
    );
    assert.deepEqual((await historyOf(db, row.id)).at(-1), [2, 'transferred', now]);
  });

  it('no recording, no transcript: recording and analysis null, the old transcript and latency kept', async () => {
    const { row } = await liveCall();
    await db.updateTable('calls').set({ transcript: JSON.stringify([{ role: 'user', text: 'kept', start_ms: 0, end_ms: 1 }]), latency: JSON.stringify({ turns: 9 }), post_call_attempts: 3 }).where('id', '=', row.id).execute();
    assert.equal(await journal.finish(refOf(row), null, { status: 'completed', endReason: 'customer_hangup', durationMs: 1000, recordingSamples: 0 }), true);
    const after = await callOf(db, row.id);
    assert.deepEqual(
      [after.recording_status, after.recording_samples, after.recording_error, after.analysis_status, after.transferred_to, after.error, after.post_call_attempts],
      [null, null, null, null, null, null, 0],
    );
    assert.deepEqual([after.transcript, after.latency], [[{ role: 'user', text: 'kept', start_ms: 0, end_ms: 1 }], { turns: 9 }]);
  });

  it('a recording that could not be written is failed with its error; latency null is written as null', async () => {
    const { row } = await liveCall();
    await db.updateTable('calls').set({ latency: JSON.stringify({ turns: 9 }) }).where('id', '=', row.id).execute();
    assert.equal(await journal.finish(refOf(row), null, { status: 'completed', endReason: 'customer_hangup', durationMs: 1000, recordingError: 'disk full', latency: null as never }), true);
    const after = await callOf(db, row.id);
    assert.deepEqual([after.recording_status, after.recording_samples, after.recording_error, after.latency], ['failed', null, 'disk full', null]);
  });

  it('samples win over a recording error: pending, no error', async () => {
    const { row } = await liveCall();
    assert.equal(await journal.finish(refOf(row), null, { status: 'completed', endReason: 'customer_hangup', durationMs: 1000, recordingSamples: 1, recordingError: 'partial' }), true);
    const after = await callOf(db, row.id);
    assert.deepEqual([after.recording_status, after.recording_samples, after.recording_error], ['pending', 1, null]);
  });
});

describe('finish: the fences', () => {
  it('another holder changes nothing: no row, no history, no ledger, no hook, no nudge', async () => {
    const { ws, row } = await liveCall();
    const [hooksBefore, nudgesBefore] = [hooked.length, nudges()];
    assert.equal(await journal.finish(refOf(row), null, { status: 'completed', endReason: 'caller_goodbye', durationMs: 3000, holder: 'B' }), false);
    const after = await callOf(db, row.id);
    assert.deepEqual([after.status, after.lease_holder, after.ended_at, after.billed_seconds], ['in_progress', 'A', null, 0]);
    assert.equal((await historyOf(db, row.id)).length, 1);
    assert.deepEqual([(await walletOf(ws.workspaceId)).ledger.length, hooked.length, nudges()], [0, hooksBefore, nudgesBefore]);
  });

  it('a lost call ends only when its lease expired strictly before the time given', async () => {
    const { row } = await liveCall();
    const expiry = new Date(T0.getTime() + 10_000);
    assert.equal(await journal.finish(refOf(row), null, { status: 'failed', endReason: 'media_error', durationMs: 0, leaseExpiredBefore: expiry }), false);
    assert.equal((await callOf(db, row.id)).status, 'in_progress');
    assert.equal(await journal.finish(refOf(row), null, { status: 'failed', endReason: 'media_error', durationMs: 0, leaseExpiredBefore: new Date(expiry.getTime() + 1) }), true);
    assert.equal((await callOf(db, row.id)).status, 'failed');
  });

  it('onlyFrom narrows the legal states: a ringing call is not canceled by a cancel of queued calls', async () => {
    const ws = await seedWorkspace(db);
    const ringing = await insertCallRow(db, ws, 'ringing');
    const queued = await insertCallRow(db, ws, 'queued');
    const cancel = { status: 'canceled' as const, endReason: 'api_hangup' as const, durationMs: 0, onlyFrom: ['queued' as const] };
    assert.equal(await journal.finish(refOf(ringing), null, cancel), false);
    assert.equal(await journal.finish(refOf(queued), null, cancel), true);
    assert.equal(await journal.finish(refOf(await insertCallRow(db, ws, 'queued')), null, { ...cancel, onlyFrom: [] }), false);
    assert.deepEqual([(await callOf(db, ringing.id)).status, (await callOf(db, queued.id)).status], ['ringing', 'canceled']);
  });

  it('ends once: a second finish is false and writes nothing (no second ledger row)', async () => {
    const { ws, row } = await liveCall();
    assert.equal(await journal.finish(refOf(row), null, { status: 'completed', endReason: 'caller_goodbye', durationMs: 2000 }), true);
    const ended = await callOf(db, row.id);
    clock.advance(9000);
    assert.equal(await journal.finish(refOf(row), null, { status: 'failed', endReason: 'media_error', durationMs: 9000 }), false);
    assert.deepEqual(await callOf(db, row.id), ended);
    assert.equal((await walletOf(ws.workspaceId)).ledger.length, 1);
  });
});

describe('finish: hooks, events, the nudge', () => {
  it('runs every hook in the transaction, after the row is terminal, with what the call ended with', async () => {
    const { ws, row } = await liveCall();
    const before = await walletOf(ws.workspaceId);
    hooked.length = 0;
    second.length = 0;
    const nudgesBefore = nudges();
    clock.advance(1000);
    const ref = refOf(row);
    assert.equal(await journal.finish(ref, null, { status: 'completed', endReason: 'agent_end_call', durationMs: 1500, holder: 'A' }), true);
    assert.equal(hooked.length, 1);
    assert.equal(hooked[0].call, ref);
    assert.equal(hooked[0].status, 'completed');
    assert.notEqual(hooked[0].tx, db, 'the finishing transaction, not the database');
    assert.deepEqual(hooked[0].finished, { status: 'completed', endReason: 'agent_end_call', durationMs: 1500, billedSeconds: 2, costMicros: 3000, endedAt: clock.now() });
    assert.deepEqual(second, [row.id]);
    assert.equal((await walletOf(ws.workspaceId)).threshold, before.threshold + 1, 'the hook’s write committed');
    assert.equal(nudges(), nudgesBefore + 1);
  });

  it('a failing hook rolls back the whole finish: row, history, ledger, the hook’s own write; no nudge', async () => {
    const { ws, row } = await liveCall();
    const before = await walletOf(ws.workspaceId);
    const nudgesBefore = nudges();
    failHook = true;
    try {
      await assert.rejects(journal.finish(refOf(row), agentOf(ws.agentId), { status: 'completed', endReason: 'caller_goodbye', durationMs: 3000, error: { code: 'x', message: 'y' }, emitError: true }), /the hook failed/);
    } finally {
      failHook = false;
    }
    assert.deepEqual(await callOf(db, row.id), row);
    assert.equal((await historyOf(db, row.id)).length, 1);
    assert.deepEqual(await walletOf(ws.workspaceId), before);
    assert.deepEqual(await eventsOf(db, row.id), []);
    assert.equal(nudges(), nudgesBefore);
  });

  it('emits call.error only when asked and there is an error; never call.ended (the post-call job does)', async () => {
    const { ws, row } = await liveCall();
    const agent = agentOf(ws.agentId);
    const trace = '00-3af7651916cd43dd8448eb211c80319c-e7ad6b7169203331-01';
    const error = { code: 'stt_failed', message: 'no speech service' };
    assert.equal(await journal.finish(refOf(row, trace), agent, { status: 'failed', endReason: 'media_error', durationMs: 0, error, emitError: true }), true);
    assert.deepEqual((await eventsOf(db, row.id)).map((e) => [e.type, e.data, e.traceParent]), [['call.error', error, trace]]);
    const quiet = await liveCall();
    assert.equal(await journal.finish(refOf(quiet.row), agentOf(quiet.ws.agentId), { status: 'failed', endReason: 'media_error', durationMs: 0, error }), true);
    const noError = await liveCall();
    assert.equal(await journal.finish(refOf(noError.row), agentOf(noError.ws.agentId), { status: 'failed', endReason: 'media_error', durationMs: 0, emitError: true }), true);
    assert.deepEqual([...(await eventsOf(db, quiet.row.id)), ...(await eventsOf(db, noError.row.id))], []);
  });
});
