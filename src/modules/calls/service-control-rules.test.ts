import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callOf, historyOf, insertCallRow, seedWorkspace, T0 } from '../../../test/support/call-rows.ts';
import { refusal } from '../../../test/support/campaign-service-rig.ts';
import { callsServiceRig } from '../../../test/support/calls-service-rig.ts';
import { CALL_STATUSES } from './tables.ts';

// The calls service's control of a call (service.ts): hang up (a queued call canceled here, a live
// one ended by its runner here or asked of its owner through the row's control), transfer (the
// target normalised or the agent's, same two ways), extraction re-run on an ended call, the live
// count. Another workspace's call is never found, and nothing of it changes.

const { db, clock, service, runHere, log } = await callsServiceRig();
const ENDED = CALL_STATUSES.filter((s) => !['queued', 'ringing', 'in_progress'].includes(s));

describe('hangup', () => {
  it('a queued call is canceled now (api_hangup, no duration)', async () => {
    const ws = await seedWorkspace(db);
    const row = await insertCallRow(db, ws, 'queued');
    clock.advance(1000);
    const after = await service.hangup(ws.workspaceId, row.id);
    assert.equal(after.status, 'canceled');
    assert.equal(after.end_reason, 'api_hangup');
    assert.equal(after.duration_ms, 0);
    assert.deepEqual(after, await callOf(db, row.id));
    assert.deepEqual((await historyOf(db, row.id)).map((h) => h[1]), ['queued', 'canceled']);
    assert.equal(log.hangups.includes(row.id), false);
  });

  for (const status of ['ringing', 'in_progress'] as const) {
    it(`a call ${status} run here is ended by the runner; run elsewhere, its control asks its owner`, async () => {
      const ws = await seedWorkspace(db);
      const here = await insertCallRow(db, ws, status);
      runHere.add(here.id);
      const answered = await service.hangup(ws.workspaceId, here.id);
      assert.ok(log.hangups.includes(here.id));
      assert.equal(answered.control, null);
      assert.equal(answered.status, status);
      const elsewhere = await insertCallRow(db, ws, status);
      const after = await service.hangup(ws.workspaceId, elsewhere.id);
      assert.ok(log.hangups.includes(elsewhere.id));
      assert.deepEqual(after.control, { action: 'hangup' });
      assert.deepEqual((await callOf(db, elsewhere.id)).control, { action: 'hangup' });
      assert.equal((await callOf(db, here.id)).control, null);
    });
  }

  it('an ended call is refused (409) naming its status, and does not change', async () => {
    const ws = await seedWorkspace(db);
    for (const status of ENDED) {
      const row = await insertCallRow(db, ws, status);
      assert.deepEqual(await refusal(service.hangup(ws.workspaceId, row.id)), { status: 409, code: 'invalid_state', detail: `The call has already ended (${status}).` });
      assert.deepEqual(await callOf(db, row.id), row);
    }
  });

  it('another workspace\'s call is not found (404) and is neither canceled nor asked to end', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    const queued = await insertCallRow(db, other, 'queued');
    const live = await insertCallRow(db, other, 'in_progress');
    assert.equal((await refusal(service.hangup(ws.workspaceId, queued.id))).status, 404);
    assert.equal((await refusal(service.hangup(ws.workspaceId, live.id))).status, 404);
    assert.equal((await callOf(db, queued.id)).status, 'queued');
    assert.equal((await callOf(db, live.id)).control, null);
    assert.equal(log.hangups.includes(live.id), false);
  });
});

describe('transfer', () => {
  it('only a call in progress (409 naming the status otherwise)', async () => {
    const ws = await seedWorkspace(db);
    for (const status of CALL_STATUSES.filter((s) => s !== 'in_progress')) {
      const row = await insertCallRow(db, ws, status);
      assert.deepEqual(await refusal(service.transfer(ws.workspaceId, row.id, '+15550100999')), {
        status: 409,
        code: 'invalid_state',
        detail: `Only a call in progress can be transferred (this one is ${status}).`,
      });
      assert.equal((await callOf(db, row.id)).control, null);
    }
  });

  it('to the number asked (normalised): the runner here, else the control for its owner', async () => {
    const ws = await seedWorkspace(db);
    const here = await insertCallRow(db, ws, 'in_progress');
    runHere.add(here.id);
    assert.equal((await service.transfer(ws.workspaceId, here.id, '+1 555 010 0998')).control, null);
    assert.deepEqual(log.transfers.at(-1), [here.id, '+15550100998']);
    const elsewhere = await insertCallRow(db, ws, 'in_progress');
    const after = await service.transfer(ws.workspaceId, elsewhere.id, '+1 555 010 0998');
    assert.deepEqual(log.transfers.at(-1), [elsewhere.id, '+15550100998']);
    assert.deepEqual(after.control, { action: 'transfer', to: '+15550100998' });
    assert.deepEqual((await callOf(db, elsewhere.id)).control, { action: 'transfer', to: '+15550100998' });
  });

  it('no number asked: the agent\'s transfer_number; none is 422 on to; a number that is not one is 422', async () => {
    const ws = await seedWorkspace(db);
    const row = await insertCallRow(db, ws, 'in_progress');
    assert.deepEqual((await refusal(service.transfer(ws.workspaceId, row.id, undefined))).errors, [{ path: 'to', message: 'required: the agent has no transfer_number' }]);
    assert.deepEqual((await refusal(service.transfer(ws.workspaceId, row.id, 'nope'))).errors, [{ path: 'to', message: 'must be a possible phone number (E.164, e.g. +15550100200)' }]);
    assert.equal((await callOf(db, row.id)).control, null);
    await db.updateTable('agents').set({ transfer_number: '+15550100777' }).where('id', '=', ws.agentId).execute();
    assert.deepEqual((await service.transfer(ws.workspaceId, row.id, undefined)).control, { action: 'transfer', to: '+15550100777' });
    await db.updateTable('agents').set({ deleted_at: T0 }).where('id', '=', ws.agentId).execute();
    const orphan = await insertCallRow(db, ws, 'in_progress');
    assert.deepEqual((await refusal(service.transfer(ws.workspaceId, orphan.id, undefined))).errors, [{ path: 'to', message: 'required: the agent has no transfer_number' }], 'its agent deleted during the call');
  });

  it('another workspace\'s call is not found (404) and gets no control', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    const row = await insertCallRow(db, other, 'in_progress');
    assert.equal((await refusal(service.transfer(ws.workspaceId, row.id, '+15550100998'))).status, 404);
    assert.equal((await callOf(db, row.id)).control, null);
  });
});

describe('analyze', () => {
  const FIELDS = [{ name: 'party_size', type: 'number', description: 'How many people' }];
  const TRANSCRIPT = [{ role: 'user', text: 'A table for 4 people, please.' }];

  async function ended(fields: Record<string, unknown> = {}) {
    const ws = await seedWorkspace(db);
    await db.updateTable('agents').set({ extraction_fields: JSON.stringify(FIELDS) } as never).where('id', '=', ws.agentId).execute();
    const row = await insertCallRow(db, ws, 'completed', { transcript: JSON.stringify(TRANSCRIPT), ...fields });
    return { ws, row };
  }

  it('writes the extraction of the stored transcript, at the clock; a failed analysis becomes ready', async () => {
    const { ws, row } = await ended({ analysis_status: 'failed', analysis_error: 'llm down' } as never);
    clock.advance(5000);
    const after = await service.analyze(ws.workspaceId, row.id);
    assert.deepEqual(after.extracted, { party_size: 4 });
    assert.equal(after.analysis_status, 'ready');
    assert.equal(after.analysis_error, null);
    assert.equal(new Date(after.updated_at).getTime(), clock.now().getTime());
    assert.deepEqual(after, await callOf(db, row.id));
  });

  it('an analysis still pending stays the post-call job\'s', async () => {
    const { ws, row } = await ended({ analysis_status: 'pending' } as never);
    const after = await service.analyze(ws.workspaceId, row.id);
    assert.deepEqual(after.extracted, { party_size: 4 });
    assert.equal(after.analysis_status, 'pending');
  });

  it('refused while queued or live, after the content was deleted, once the agent is deleted (409)', async () => {
    const ws = await seedWorkspace(db);
    for (const status of ['queued', 'ringing', 'in_progress'] as const) {
      const row = await insertCallRow(db, ws, status);
      assert.deepEqual(await refusal(service.analyze(ws.workspaceId, row.id)), { status: 409, code: 'invalid_state', detail: 'The call has not ended yet.' });
    }
    const deleted = await insertCallRow(db, ws, 'completed', { content_deleted_at: T0 });
    assert.deepEqual(await refusal(service.analyze(ws.workspaceId, deleted.id)), { status: 409, code: 'invalid_state', detail: "The call's transcript was deleted." });
    const { ws: ws2, row } = await ended();
    await db.updateTable('agents').set({ deleted_at: T0 }).where('id', '=', ws2.agentId).execute();
    assert.deepEqual(await refusal(service.analyze(ws2.workspaceId, row.id)), { status: 409, code: 'invalid_state', detail: "The call's agent was deleted." });
    assert.deepEqual((await callOf(db, row.id)).extracted, {});
  });

  it('another workspace\'s call is not found (404) and is not written', async () => {
    const ws = await seedWorkspace(db);
    const { row } = await ended();
    assert.equal((await refusal(service.analyze(ws.workspaceId, row.id))).status, 404);
    assert.deepEqual((await callOf(db, row.id)).extracted, {});
  });
});

describe('liveCount and callOf', () => {
  it('counts the workspace\'s ringing and in-progress calls only', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    assert.equal(await service.liveCount(ws.workspaceId), 0);
    for (const status of CALL_STATUSES) await insertCallRow(db, ws, status);
    await insertCallRow(db, ws, 'in_progress');
    await insertCallRow(db, other, 'ringing');
    assert.equal(await service.liveCount(ws.workspaceId), 3);
  });

  it('callOf finds the workspace\'s call only', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    const row = await insertCallRow(db, ws, 'completed');
    assert.deepEqual(await service.callOf(ws.workspaceId, row.id), row);
    assert.deepEqual(await refusal(service.callOf(other.workspaceId, row.id)), { status: 404, code: 'not_found', detail: 'call not found' });
  });
});
