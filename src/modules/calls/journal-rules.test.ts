import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentOf, callOf, eventsOf, historyOf, insertCallRow, journalRig, ms, refOf, seedWorkspace, T0 } from '../../../test/support/call-rows.ts';
import { newId } from '../../platform/ids.ts';
import { CALL_STATUSES, type CallStatus } from './tables.ts';

// The CallJournal's state machine (journal.ts), on the real database with a manual clock and the
// real events engine, rows written directly: every legal and every illegal transition (the
// boolean, the row, the history), what ring and answered write, the transcript, transfer and
// error events. journal-finish-rules and journal-post-call-rules hold the end of a call.

const { db, clock, journal } = await journalRig();
const ws = await seedWorkspace(db);

/** to → the states it may come from (DESIGN part 9): the table every other pair is refused by. */
const LEGAL: Record<CallStatus, CallStatus[]> = {
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

describe('transitions: every pair (through finish, the generic move)', () => {
  for (const to of CALL_STATUSES) {
    it(`to ${to}: legal only from ${LEGAL[to].join(', ') || 'nothing'}`, async () => {
      for (const from of CALL_STATUSES) {
        const row = await insertCallRow(db, ws, from);
        clock.advance(1000);
        const moved = await journal.finish(refOf(row), null, { status: to, endReason: 'api_hangup', durationMs: 0 });
        const legal = LEGAL[to].includes(from);
        assert.equal(moved, legal, `${from} → ${to}`);
        const after = await callOf(db, row.id);
        assert.equal(after.status, legal ? to : from, `${from} → ${to}: status`);
        const expected: Array<[number, CallStatus, number]> = [[1, from, T0.getTime()]];
        if (legal) expected.push([2, to, clock.now().getTime()]);
        assert.deepEqual(await historyOf(db, row.id), expected, `${from} → ${to}: history`);
        assert.equal(ms(after.updated_at), legal ? clock.now().getTime() : T0.getTime());
      }
    });
  }

  it('a terminal state never changes, whatever is asked', async () => {
    for (const from of ['completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled'] as const) {
      const row = await insertCallRow(db, ws, from, { lease_holder: 'A' });
      assert.equal(await journal.ring(refOf(row), 'A', 5000), false);
      assert.equal(await journal.answered(refOf(row), null, 'A'), false);
      for (const to of CALL_STATUSES) assert.equal(await journal.finish(refOf(row), null, { status: to, endReason: 'api_hangup', durationMs: 0 }), false);
      assert.equal((await callOf(db, row.id)).status, from);
      assert.equal((await historyOf(db, row.id)).length, 1);
    }
  });
});

describe('the status history', () => {
  it('appends one row per move, numbered on from the last, at the clock of the move', async () => {
    const row = await insertCallRow(db, ws, 'queued');
    clock.set(new Date(T0.getTime() + 10_000));
    assert.equal(await journal.ring(refOf(row), 'A', 5000), true);
    clock.advance(2500);
    assert.equal(await journal.answered(refOf(row), null, 'A'), true);
    clock.advance(7000);
    assert.equal(await journal.finish(refOf(row), null, { status: 'completed', endReason: 'caller_goodbye', durationMs: 7000, holder: 'A' }), true);
    assert.deepEqual(await historyOf(db, row.id), [
      [1, 'queued', T0.getTime()],
      [2, 'ringing', T0.getTime() + 10_000],
      [3, 'in_progress', T0.getTime() + 12_500],
      [4, 'completed', T0.getTime() + 19_500],
    ]);
  });

  it('starts at 1 for a call with no history yet', async () => {
    const row = await insertCallRow(db, ws, 'queued');
    await db.deleteFrom('call_status_events').where('call_id', '=', row.id).execute();
    assert.equal(await journal.ring(refOf(row), 'A', 5000), true);
    assert.deepEqual(await historyOf(db, row.id), [[1, 'ringing', clock.now().getTime()]]);
  });
});

describe('ring', () => {
  it('queued → ringing under the holder lease: expires exactly leaseMs from now, renewed and started now', async () => {
    const row = await insertCallRow(db, ws, 'queued');
    clock.set(new Date(T0.getTime() + 60_000));
    const now = clock.now().getTime();
    assert.equal(await journal.ring(refOf(row), 'holder-A', 12_345), true);
    const after = await callOf(db, row.id);
    assert.equal(after.status, 'ringing');
    assert.equal(after.lease_holder, 'holder-A');
    assert.equal(ms(after.lease_expires_at), now + 12_345);
    assert.equal(ms(after.last_renewed_at), now);
    assert.equal(ms(after.started_at), now);
    assert.equal(ms(after.updated_at), now);
    assert.equal(ms(after.answered_at), null);
  });

  it('refuses a call that is not queued and leaves its lease alone', async () => {
    for (const from of ['ringing', 'in_progress'] as const) {
      const row = await insertCallRow(db, ws, from, { lease_holder: 'holder-A', lease_expires_at: T0, last_renewed_at: T0 });
      assert.equal(await journal.ring(refOf(row), 'holder-B', 5000), false);
      const after = await callOf(db, row.id);
      assert.equal(after.lease_holder, 'holder-A');
      assert.equal(ms(after.lease_expires_at), T0.getTime());
      assert.equal(ms(after.started_at), null);
    }
  });
});

describe('answered', () => {
  it('ringing → in_progress for the lease holder: answered_at now, call.started with direction, from and to', async () => {
    const row = await insertCallRow(db, ws, 'ringing', { lease_holder: 'holder-A' });
    clock.advance(3000);
    const trace = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    assert.equal(await journal.answered(refOf(row, trace), agentOf(ws.agentId), 'holder-A'), true);
    const after = await callOf(db, row.id);
    assert.equal(after.status, 'in_progress');
    assert.equal(ms(after.answered_at), clock.now().getTime());
    const events = await eventsOf(db, row.id);
    assert.deepEqual(
      events.map((e) => [e.type, e.data, e.workspaceId, e.agentId, e.traceParent]),
      [['call.started', { direction: 'outbound', from: '+15550001111', to: '+15550002222' }, ws.workspaceId, ws.agentId, trace]],
    );
  });

  it('refuses another holder: nothing written, nothing emitted', async () => {
    const row = await insertCallRow(db, ws, 'ringing', { lease_holder: 'holder-A' });
    assert.equal(await journal.answered(refOf(row), agentOf(ws.agentId), 'holder-B'), false);
    const after = await callOf(db, row.id);
    assert.equal(after.status, 'ringing');
    assert.equal(after.answered_at, null);
    assert.deepEqual(await eventsOf(db, row.id), []);
    assert.equal((await historyOf(db, row.id)).length, 1);
  });

  it('refuses a call not ringing: no call.started', async () => {
    const row = await insertCallRow(db, ws, 'queued', { lease_holder: 'holder-A' });
    assert.equal(await journal.answered(refOf(row), agentOf(ws.agentId), 'holder-A'), false);
    assert.deepEqual(await eventsOf(db, row.id), []);
  });
});

describe('the live events', () => {
  it('transcript, transfer and error: their data, no row of the call changed', async () => {
    const row = await insertCallRow(db, ws, 'in_progress');
    const agent = agentOf(ws.agentId);
    const trace = '00-1af7651916cd43dd8448eb211c80319c-c7ad6b7169203331-01';
    await journal.transcript(refOf(row, trace), agent, { role: 'user', text: 'Hello', start_ms: 100, end_ms: 900 }, 3);
    await journal.transfer(refOf(row, trace), agent, '+15559990000', 'asked for a human');
    await journal.error(refOf(row, trace), agent, 'llm_timeout', 'x'.repeat(600));
    const events = await eventsOf(db, row.id);
    assert.deepEqual(
      events.map((e) => [e.type, e.data, e.traceParent]),
      [
        ['call.transcript', { role: 'user', text: 'Hello', start_ms: 100, end_ms: 900, turn: 3 }, trace],
        ['call.transfer', { to: '+15559990000', reason: 'asked for a human' }, trace],
        ['call.error', { code: 'llm_timeout', message: 'x'.repeat(500) }, trace],
      ],
    );
    const after = await callOf(db, row.id);
    assert.equal(ms(after.updated_at), T0.getTime());
    assert.equal(after.status, 'in_progress');
  });
});

describe('expectStream and claimStream', () => {
  it('binds a ringing call to the provider id and token; a call not ringing is refused', async () => {
    const row = await insertCallRow(db, ws, 'ringing');
    clock.advance(1000);
    assert.equal(await journal.expectStream(row.id, 'CA123', 'hash-1'), true);
    const after = await callOf(db, row.id);
    assert.deepEqual([after.provider_call_id, after.stream_token_hash, ms(after.updated_at)], ['CA123', 'hash-1', clock.now().getTime()]);
    for (const status of ['queued', 'in_progress', 'completed'] as const) {
      const other = await insertCallRow(db, ws, status);
      assert.equal(await journal.expectStream(other.id, 'CA124', 'hash-2'), false, status);
      assert.equal((await callOf(db, other.id)).stream_token_hash, null);
    }
  });

  it('the right token, provider id and a ringing call take the lease once; anything else is refused', async () => {
    const row = await insertCallRow(db, ws, 'ringing', { provider_call_id: 'CA200', stream_token_hash: 'good', lease_holder: 'dialer' });
    assert.equal(await journal.claimStream(row.id, 'bad', 'CA200', 'media', 8000), undefined);
    assert.equal(await journal.claimStream(row.id, 'good', 'CA201', 'media', 8000), undefined);
    const other = await insertCallRow(db, ws, 'ringing', { provider_call_id: 'CA200', stream_token_hash: 'good' });
    clock.advance(500);
    const now = clock.now().getTime();
    const claimed = await journal.claimStream(row.id, 'good', 'CA200', 'media', 8000);
    assert.equal(claimed?.id, row.id);
    assert.deepEqual([claimed?.lease_holder, ms(claimed?.lease_expires_at), ms(claimed?.last_renewed_at), ms(claimed?.updated_at), claimed?.stream_token_hash], ['media', now + 8000, now, now, null]);
    assert.equal(await journal.claimStream(row.id, 'good', 'CA200', 'media', 8000), undefined, 'a token is spent once');
    assert.equal((await callOf(db, other.id)).stream_token_hash, 'good', 'only the call named');
    const answered = await insertCallRow(db, ws, 'in_progress', { provider_call_id: 'CA300', stream_token_hash: 'good' });
    assert.equal(await journal.claimStream(answered.id, 'good', 'CA300', 'media', 8000), undefined);
  });
});

describe('renew', () => {
  it('extends only the holder’s live calls named: lease now + leaseMs, renewed now, each its own elapsed', async () => {
    const held = { lease_holder: 'A', lease_expires_at: T0, last_renewed_at: T0, live_elapsed_ms: 5 };
    const ringing = await insertCallRow(db, ws, 'ringing', held);
    const live = await insertCallRow(db, ws, 'in_progress', { ...held, control: JSON.stringify({ action: 'hangup' }) });
    const others = await insertCallRow(db, ws, 'in_progress', { ...held, lease_holder: 'B' });
    const ended = await insertCallRow(db, ws, 'completed', held);
    const queued = await insertCallRow(db, ws, 'queued', held);
    const unnamed = await insertCallRow(db, ws, 'in_progress', held);
    clock.advance(4000);
    const now = clock.now().getTime();
    const named = [ringing, live, others, ended, queued].map((c, i) => ({ id: c.id, elapsedMs: i === 0 ? 1234.5 : 999.4 }));
    const answer = await journal.renew('A', named, 15_000);
    assert.deepEqual(
      answer.map((r) => [r.id, r.control]).sort(),
      [
        [ringing.id, null],
        [live.id, { action: 'hangup' }],
      ].sort(),
    );
    for (const [row, elapsed] of [[ringing, 1235], [live, 999]] as const) {
      const after = await callOf(db, row.id);
      assert.deepEqual([ms(after.lease_expires_at), ms(after.last_renewed_at), after.live_elapsed_ms], [now + 15_000, now, elapsed]);
    }
    for (const row of [others, ended, queued, unnamed]) {
      const after = await callOf(db, row.id);
      assert.deepEqual([ms(after.lease_expires_at), ms(after.last_renewed_at), after.live_elapsed_ms], [T0.getTime(), T0.getTime(), 5], row.status);
    }
  });

  it('renews nothing for an empty list', async () => {
    assert.deepEqual(await journal.renew('A', [], 15_000), []);
  });
});

describe('queue and queueMany', () => {
  it('writes the call queued, with its defaults, and its first history row', async () => {
    clock.advance(1000);
    const now = clock.now().getTime();
    const id = newId('call');
    const trace = '00-2af7651916cd43dd8448eb211c80319c-d7ad6b7169203331-01';
    const base = { workspace_id: ws.workspaceId, agent_id: ws.agentId, direction: 'outbound' as const, from_number: '+1555', to_number: '+1666', provider: 'sandbox' };
    const row = await db.transaction().execute((tx) => journal.queue(tx, { ...base, id, traceParent: trace }));
    assert.equal(row.id, id);
    const after = await callOf(db, id);
    assert.deepEqual(
      [after.status, after.variables, after.metadata, after.simulation, after.campaign_id, after.schedule_id, after.transcript, after.extracted, after.trace_parent, ms(after.created_at), ms(after.updated_at)],
      ['queued', {}, {}, null, null, null, [], {}, trace, now, now],
    );
    assert.deepEqual([after.from_number, after.to_number, after.provider, after.direction], ['+1555', '+1666', 'sandbox', 'outbound']);
    assert.deepEqual(await historyOf(db, id), [[1, 'queued', now]]);
  });

  it('keeps what is given, answers in the order given, and rolls back with the caller', async () => {
    const base = { workspace_id: ws.workspaceId, agent_id: ws.agentId, direction: 'outbound' as const, from_number: null, to_number: '+1666', provider: 'sandbox' };
    const ids = [newId('call'), newId('call'), newId('call')].reverse();
    const simulation = { caller_script: ['hi'] };
    const rows = await db.transaction().execute((tx) =>
      journal.queueMany(tx, ids.map((id) => ({ ...base, id, variables: { name: id }, metadata: { m: 1 }, simulation, campaign_id: 'cmp_given', schedule_id: 'sch_given' }))),
    );
    assert.deepEqual(rows.map((r) => r.id), ids);
    const first = await callOf(db, ids[0]);
    assert.deepEqual([first.variables, first.metadata, first.simulation, first.campaign_id, first.schedule_id, first.trace_parent], [{ name: ids[0] }, { m: 1 }, simulation, 'cmp_given', 'sch_given', null]);
    assert.deepEqual(await db.transaction().execute((tx) => journal.queueMany(tx, [])), []);
    const lost = newId('call');
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await journal.queue(tx, { ...base, id: lost });
        throw new Error('the caller failed');
      }),
    );
    assert.equal(await db.selectFrom('calls').select('id').where('id', '=', lost).executeTakeFirst(), undefined);
  });
});
