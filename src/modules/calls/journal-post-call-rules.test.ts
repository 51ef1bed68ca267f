import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { agentOf, callOf, eventsOf, insertCallRow, journalRig, ms, seedWorkspace, T0 } from '../../../test/support/call-rows.ts';
import { newId } from '../../platform/ids.ts';
import type { PostCallFence } from './post-call-sql.ts';

// The post-call job's writes (journal.ts over post-call-sql.ts), on the real database with a
// manual clock and the real events engine: which calls a claim takes (due at or before now, in
// due order, up to the limit) and what it writes (the attempt counted, the lease, the next due
// time); every result fenced by holder, attempt and ended_event_at; the retry; call.ended and the
// outcome emitted once. A claim reads the whole table: each test first clears every due time.

const { db, clock, journal } = await journalRig();
const ws = await seedWorkspace(db);

beforeEach(async () => {
  await db.updateTable('calls').set({ post_call_due_at: null }).execute();
  clock.set(T0);
});

const ended = (fields: Record<string, unknown> = {}) =>
  insertCallRow(db, ws, 'completed', { end_reason: 'caller_goodbye', ended_at: T0, duration_ms: 4200, billed_seconds: 5, cost_micros: 7500, post_call_due_at: T0, ...fields });

/** A call claimed by `holder`: its fence. */
async function claimed(holder = 'W1', fields: Record<string, unknown> = {}): Promise<PostCallFence> {
  const row = await ended(fields);
  const [claim] = await journal.claimPostCalls({ holder, leaseMs: 30_000, limit: 1 });
  assert.equal(claim.id, row.id);
  return { id: row.id, holder, attempt: claim.post_call_attempts };
}

describe('claimPostCalls', () => {
  it('takes the calls due at or before now, not a millisecond later, nor those never due', async () => {
    const before = await ended({ post_call_due_at: new Date(T0.getTime() - 1) });
    const exactly = await ended({ post_call_due_at: T0 });
    await ended({ post_call_due_at: new Date(T0.getTime() + 1) });
    await ended({ post_call_due_at: null });
    const ids = (await journal.claimPostCalls({ holder: 'W1', leaseMs: 30_000, limit: 10 })).map((r) => r.id);
    assert.deepEqual(ids.sort(), [before.id, exactly.id].sort());
  });

  it('counts the attempt and leases to the holder: lease and next due time exactly now + leaseMs', async () => {
    const row = await ended({ post_call_attempts: 2 });
    clock.advance(1000);
    const [claim] = await journal.claimPostCalls({ holder: 'W1', leaseMs: 30_000, limit: 5 });
    const now = clock.now().getTime();
    const after = await callOf(db, row.id);
    for (const r of [claim, after]) {
      assert.deepEqual([r.id, r.post_call_attempts, r.post_call_lease_holder, ms(r.post_call_lease_expires_at), ms(r.post_call_due_at)], [row.id, 3, 'W1', now + 30_000, now + 30_000]);
    }
    clock.set(new Date(now + 29_999));
    assert.deepEqual(await journal.claimPostCalls({ holder: 'W2', leaseMs: 30_000, limit: 5 }), [], 'held while the lease runs');
    clock.set(new Date(now + 30_000));
    const [again] = await journal.claimPostCalls({ holder: 'W2', leaseMs: 30_000, limit: 5 });
    assert.deepEqual([again.id, again.post_call_attempts, again.post_call_lease_holder], [row.id, 4, 'W2'], 'due again when the lease expires');
  });

  it('earliest due first, then by id, up to the limit', async () => {
    const late = await ended({ post_call_due_at: new Date(T0.getTime() - 1000) });
    const ids = [newId('call'), newId('call'), newId('call')];
    // Inserted highest id first: only the order by id sorts them.
    for (const id of [...ids].reverse()) await ended({ id, post_call_due_at: new Date(T0.getTime() - 5000) });
    const first = await journal.claimPostCalls({ holder: 'W1', leaseMs: 30_000, limit: 2 });
    assert.deepEqual(first.map((r) => r.id).sort(), ids.slice(0, 2).sort());
    const rest = await journal.claimPostCalls({ holder: 'W1', leaseMs: 30_000, limit: 2 });
    assert.deepEqual(rest.map((r) => r.id).sort(), [ids[2], late.id].sort());
  });
});

describe('the fence: holder, attempt, not yet ended', () => {
  it('renewPostCall extends this attempt only: lease and due time now + leaseMs', async () => {
    const fence = await claimed('W1');
    clock.advance(10_000);
    const now = clock.now().getTime();
    for (const lost of [{ ...fence, holder: 'W2' }, { ...fence, attempt: fence.attempt + 1 }, { ...fence, id: newId('call') }]) {
      assert.equal(await journal.renewPostCall(lost, 60_000), false);
    }
    assert.equal(ms((await callOf(db, fence.id)).post_call_lease_expires_at), T0.getTime() + 30_000);
    assert.equal(await journal.renewPostCall(fence, 60_000), true);
    const after = await callOf(db, fence.id);
    assert.deepEqual([ms(after.post_call_lease_expires_at), ms(after.post_call_due_at), ms(after.updated_at)], [now + 60_000, now + 60_000, now]);
  });

  it('a holder that lost the claim to another worker changes nothing', async () => {
    const first = await claimed('W1');
    clock.advance(30_000);
    const [retaken] = await journal.claimPostCalls({ holder: 'W2', leaseMs: 30_000, limit: 1 });
    const before = await callOf(db, retaken.id);
    assert.equal(await journal.recordingStored(first, { key: 'k', bytes: 10 }), false);
    assert.equal(await journal.analysisDone(first, { x: 1 }), false);
    assert.equal(await journal.retryPostCall(first, { dueAt: T0, attempts: 0, recordingError: 'e' }), false);
    assert.equal(await journal.renewPostCall(first, 60_000), false);
    assert.equal(await journal.endPostCall(first, agentOf(ws.agentId)), false);
    assert.deepEqual(await callOf(db, retaken.id), before);
    assert.deepEqual(await eventsOf(db, first.id), []);
  });

  it('recordingStored: ready with key and bytes, the error cleared', async () => {
    const fence = await claimed('W1', { recording_status: 'pending', recording_error: 'earlier' });
    clock.advance(2000);
    assert.equal(await journal.recordingStored(fence, { key: 'recordings/a.mp3', bytes: 4321 }), true);
    const after = await callOf(db, fence.id);
    assert.deepEqual(
      [after.recording_status, after.recording_key, after.recording_bytes, after.recording_error, ms(after.updated_at)],
      ['ready', 'recordings/a.mp3', 4321, null, clock.now().getTime()],
    );
  });

  it('analysisDone: ready with what was extracted, the error cleared', async () => {
    const fence = await claimed('W1', { analysis_status: 'pending', analysis_error: 'earlier' });
    assert.equal(await journal.analysisDone(fence, { booked: true }), true);
    const after = await callOf(db, fence.id);
    assert.deepEqual([after.analysis_status, after.extracted, after.analysis_error], ['ready', { booked: true }, null]);
  });
});

describe('retryPostCall', () => {
  it('due again at dueAt with the attempts kept, the lease released, the errors cut to 500 characters', async () => {
    const fence = await claimed('W1');
    const dueAt = new Date(T0.getTime() + 123_456);
    assert.equal(await journal.retryPostCall(fence, { dueAt, attempts: 7, recordingError: 'r'.repeat(600), analysisError: 'a'.repeat(600) }), true);
    const after = await callOf(db, fence.id);
    assert.deepEqual(
      [ms(after.post_call_due_at), after.post_call_attempts, after.post_call_lease_holder, after.post_call_lease_expires_at, after.recording_error, after.analysis_error],
      [dueAt.getTime(), 7, null, null, 'r'.repeat(500), 'a'.repeat(500)],
    );
    assert.equal(await journal.recordingStored(fence, { key: 'k', bytes: 1 }), false, 'the released attempt is no longer this holder’s');
  });

  it('keeps the errors it is not given', async () => {
    const fence = await claimed('W1', { recording_error: 'old r', analysis_error: 'old a' });
    assert.equal(await journal.retryPostCall(fence, { dueAt: T0, attempts: 1 }), true);
    const after = await callOf(db, fence.id);
    assert.deepEqual([after.recording_error, after.analysis_error, after.post_call_attempts], ['old r', 'old a', 1]);
  });
});

describe('endPostCall', () => {
  it('emits call.ended and the outcome once, from the row, and closes the post-call job', async () => {
    const transcript = [{ role: 'agent', text: 'Hi', start_ms: 0, end_ms: 1 }, { role: 'user', text: 'Bye', start_ms: 2, end_ms: 3 }];
    const fence = await claimed('W1', { recording_key: 'recordings/x.mp3', transcript: JSON.stringify(transcript), extracted: JSON.stringify({ ok: 1 }), latency: JSON.stringify({ turns: 2 }) });
    clock.advance(3000);
    const trace = '00-4af7651916cd43dd8448eb211c80319c-f7ad6b7169203331-01';
    assert.equal(await journal.endPostCall(fence, agentOf(ws.agentId), {}, trace), true);
    const now = clock.now().getTime();
    const after = await callOf(db, fence.id);
    assert.deepEqual(
      [ms(after.ended_event_at), after.post_call_due_at, after.post_call_lease_holder, after.post_call_lease_expires_at, ms(after.updated_at), after.recording_status, after.analysis_status],
      [now, null, null, null, now, null, null],
    );
    const base = { call_id: fence.id, agent_id: ws.agentId, from: '+15550001111', to: '+15550002222' };
    assert.deepEqual((await eventsOf(db, fence.id)).map((e) => [e.type, e.data, e.traceParent, e.at]), [
      ['call.ended', { duration_ms: 4200, status: 'completed', end_reason: 'caller_goodbye', transcript_url: `https://links.test/${fence.id}/transcript`, recording_url: `https://links.test/${fence.id}/recording.mp3`, cost_usd: 0.0075, latency: { turns: 2 } }, trace, now],
      ['call.completed', { ...base, duration_seconds: 5, transcript: 'agent: Hi\nuser: Bye', extracted: { ok: 1 } }, trace, now],
    ]);
    clock.advance(1000);
    assert.equal(await journal.endPostCall(fence, agentOf(ws.agentId), {}, trace), false, 'once');
    assert.equal((await eventsOf(db, fence.id)).length, 2);
    assert.equal(ms((await callOf(db, fence.id)).ended_event_at), now);
  });

  it('the steps still failing are failed, their errors cut to 500 characters', async () => {
    const fence = await claimed('W1', { recording_status: 'pending', analysis_status: 'pending' });
    assert.equal(await journal.endPostCall(fence, null, { recording: 'r'.repeat(600), analysis: 'a'.repeat(600) }), true);
    const after = await callOf(db, fence.id);
    assert.deepEqual([after.recording_status, after.recording_error, after.analysis_status, after.analysis_error], ['failed', 'r'.repeat(500), 'failed', 'a'.repeat(500)]);
  });

  it('a call ended by another worker stays ended: a later claim finds it not due', async () => {
    const fence = await claimed('W1');
    assert.equal(await journal.endPostCall(fence, null), true);
    clock.advance(3_600_000);
    assert.deepEqual(await journal.claimPostCalls({ holder: 'W2', leaseMs: 30_000, limit: 10 }), []);
    await db.updateTable('calls').set({ post_call_lease_holder: 'W1' }).where('id', '=', fence.id).execute();
    assert.equal(await journal.renewPostCall(fence, 1000), false, 'ended_event_at fences even the same holder and attempt');
  });
});
