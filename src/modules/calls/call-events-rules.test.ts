import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentOf, eventsOf, insertCallRow, journalRig, LINKS, seedWorkspace } from '../../../test/support/call-rows.ts';
import { createEventEmitter } from '../../platform/outbox/emitter.ts';
import { createCallEvents } from './call-events.ts';
import { endEventsOf } from './end-events.ts';
import type { CallRow } from './repo.ts';

// A call's events (call-events.ts) and its last ones built from the row (end-events.ts): what each
// carries, for every terminal state, written through the real outbox on the test database.

const base = {
  id: 'call_1',
  agent_id: 'agent_1',
  workspace_id: 'ws_1',
  from_number: '+15550001111',
  to_number: '+15550002222',
  duration_ms: 7400,
  billed_seconds: 8,
  cost_micros: '12000',
  end_reason: 'caller_goodbye',
  recording_key: 'recordings/ws_1/call_1.mp3',
  latency: { turns: 2 },
  transcript: [
    { role: 'agent', text: 'Hello.' },
    { role: 'user', text: 'Bye.' },
  ],
  extracted: { intent: 'hours' },
  transferred_to: null,
};
const rowOf = (fields: Record<string, unknown>) => ({ ...base, ...fields }) as unknown as CallRow;
const who = { call_id: 'call_1', agent_id: 'agent_1', from: '+15550001111', to: '+15550002222' };

describe('endEventsOf', () => {
  it('call.ended: its figures, links and latency', () => {
    const [ended] = endEventsOf(rowOf({ status: 'completed' }), LINKS);
    assert.deepEqual(ended, {
      type: 'call.ended',
      data: {
        duration_ms: 7400,
        status: 'completed',
        end_reason: 'caller_goodbye',
        transcript_url: 'https://links.test/call_1/transcript',
        recording_url: 'https://links.test/call_1/recording.mp3',
        cost_usd: 0.012,
        latency: { turns: 2 },
      },
    });
  });

  it('call.ended without a recording, a duration or latency: null, 0, null', () => {
    const [ended] = endEventsOf(rowOf({ status: 'busy', recording_key: null, duration_ms: null, latency: null }), LINKS);
    assert.equal(ended.data.recording_url, null);
    assert.equal(ended.data.duration_ms, 0);
    assert.equal(ended.data.latency, null);
  });

  for (const status of ['completed', 'voicemail'] as const) {
    it(`${status}: call.completed with the transcript as text, the billed seconds and the extraction`, () => {
      const events = endEventsOf(rowOf({ status }), LINKS);
      assert.equal(events.length, 2);
      assert.deepEqual(events[1], { type: 'call.completed', data: { ...who, duration_seconds: 8, transcript: 'agent: Hello.\nuser: Bye.', extracted: { intent: 'hours' } } });
    });
  }

  it('completed without a transcript or an extraction: empty text, {}', () => {
    const events = endEventsOf(rowOf({ status: 'completed', transcript: null, extracted: null }), LINKS);
    assert.equal(events[1].data.transcript, '');
    assert.deepEqual(events[1].data.extracted, {});
  });

  it('transferred: call.transferred, to whom and why', () => {
    const events = endEventsOf(rowOf({ status: 'transferred', end_reason: 'transferred', transferred_to: '+15550100999' }), LINKS);
    assert.deepEqual(events[1], { type: 'call.transferred', data: { ...who, transferred_to: '+15550100999', reason: 'transferred' } });
    assert.equal(endEventsOf(rowOf({ status: 'transferred', transferred_to: null }), LINKS)[1].data.transferred_to, null);
  });

  for (const status of ['busy', 'no_answer', 'failed'] as const) {
    it(`${status}: call.failed with the status and the reason`, () => {
      const events = endEventsOf(rowOf({ status, end_reason: status }), LINKS);
      assert.deepEqual(events[1], { type: 'call.failed', data: { ...who, status, end_reason: status } });
    });
  }

  it('canceled: call.ended alone', () => {
    assert.deepEqual(
      endEventsOf(rowOf({ status: 'canceled' }), LINKS).map((e) => e.type),
      ['call.ended'],
    );
  });
});

const { db, database, clock } = await journalRig();
const events = createCallEvents({ db, events: createEventEmitter({ clock, webhooks: { agentSchedule: [0], tenantSchedule: [0] }, notifyInTransaction: database.kind === 'postgres' }), links: LINKS });
const TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('createCallEvents', () => {
  it('emit: in the transaction, naming the call, its workspace, agent and trace', async () => {
    const ws = await seedWorkspace(db);
    const call = await insertCallRow(db, ws, 'in_progress');
    await db.transaction().execute((tx) => events.emit(tx, { ...call, traceParent: TRACE }, agentOf(ws.agentId), 'call.started', { a: 1 }));
    const [event] = await eventsOf(db, call.id);
    assert.deepEqual([event.type, event.data, event.workspaceId, event.agentId, event.traceParent], ['call.started', { a: 1 }, ws.workspaceId, ws.agentId, TRACE]);
  });

  it('emitAlone: in a transaction of its own', async () => {
    const ws = await seedWorkspace(db);
    const call = await insertCallRow(db, ws, 'in_progress');
    await events.emitAlone({ ...call, traceParent: TRACE }, agentOf(ws.agentId), 'call.transcript', { text: 'hi' });
    const [event] = await eventsOf(db, call.id);
    assert.deepEqual([event.type, event.data, event.workspaceId, event.agentId, event.traceParent], ['call.transcript', { text: 'hi' }, ws.workspaceId, ws.agentId, TRACE]);
  });

  it('emitEnd: call.ended then the outcome, from the row', async () => {
    const ws = await seedWorkspace(db);
    const call = await insertCallRow(db, ws, 'busy', { end_reason: 'busy', duration_ms: 0 });
    await db.transaction().execute((tx) => events.emitEnd(tx, { ...call, traceParent: TRACE }, agentOf(ws.agentId)));
    const written = await eventsOf(db, call.id);
    assert.deepEqual(
      written.map((e) => [e.type, e.traceParent, e.agentId]),
      [
        ['call.ended', TRACE, ws.agentId],
        ['call.failed', TRACE, ws.agentId],
      ],
    );
    assert.equal(written[1].data.status, 'busy');
  });
});
