import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventsOf } from '../../../test/support/call-rows.ts';
import { runnerRig } from '../../../test/support/runner-rig.ts';
import { BLOCK_SAMPLES } from '../../runtime/audio/recorder.ts';
import { lostCallDurationMs } from './ownership.ts';
import { rawTrackKey } from './raw-tracks.ts';
import type { CallRow } from './repo.ts';

// Ownership of live calls (ownership.ts): what a call whose process died is billed, the sweep
// that ends such calls (and keeps their complete raw blocks), and the renewal of this process's
// leases with the hang-ups and transfers other instances asked for. The real runner and journal
// on the real sandbox (SANDBOX_SPEED=max), rows written straight into the tables.

const ANSWERED = new Date('2026-11-23T10:00:00.000Z');
const at = (ms: number) => new Date(ANSWERED.getTime() + ms);
const row = (fields: Partial<CallRow>) => ({ provider: 'twilio', answered_at: ANSWERED, last_renewed_at: null, live_elapsed_ms: null, ...fields }) as CallRow;

// Built before the first suite: a suite declared before a top-level await may run, and the
// file's closers with it, before the app exists (its PostgreSQL pool then keeps the file alive).
const { db, t, runner, ownership, worker, workspace, ringing, connected, talkative, callOf } = await runnerRig();
const blobs = t.platform.providers.blobs;

describe('lostCallDurationMs: what a lost call is billed', () => {
  it('its own clock at the last renewal, capped at the agent limit', () => {
    assert.equal(lostCallDurationMs(row({ live_elapsed_ms: 31_000, last_renewed_at: at(5000) }), 60, 20), 31_000);
    assert.equal(lostCallDurationMs(row({ live_elapsed_ms: 61_000 }), 60, 20), 60_000);
    assert.equal(lostCallDurationMs(row({ live_elapsed_ms: 60_000 }), 60, 20), 60_000);
    assert.equal(lostCallDurationMs(row({ live_elapsed_ms: 90_000 }), null, 20), 90_000, 'no agent: no cap');
    assert.equal(lostCallDurationMs(row({ live_elapsed_ms: 0 }), 60, 20), 0);
  });

  it('never answered: 0, whatever was renewed', () => {
    assert.equal(lostCallDurationMs(row({ answered_at: null, live_elapsed_ms: 5000, last_renewed_at: at(5000) }), 60, 20), 0);
    assert.equal(lostCallDurationMs(row({ answered_at: null, live_elapsed_ms: 5000, last_renewed_at: at(5000), provider: 'sandbox' }), 60, 20), 0);
  });

  it('a carrier call never renewed after its answer: the wall time from the answer to the last renewal (0 without one)', () => {
    assert.equal(lostCallDurationMs(row({ last_renewed_at: at(12_345) }), 60, 20), 12_345);
    assert.equal(lostCallDurationMs(row({ last_renewed_at: at(90_000) }), 60, 20), 90_000, 'wall time is not capped');
    assert.equal(lostCallDurationMs(row({ last_renewed_at: null }), 60, 20), 0);
    assert.equal(lostCallDurationMs(row({ last_renewed_at: at(-4000) }), 60, 20), 0, 'a renewal before the answer: 0');
  });

  it('a sandbox call: the wall time times SANDBOX_SPEED, at most the agent limit', () => {
    const sandbox = (ms: number | null) => row({ provider: 'sandbox', last_renewed_at: ms === null ? null : at(ms) });
    assert.equal(lostCallDurationMs(sandbox(1500), 60, 20), 30_000);
    assert.equal(lostCallDurationMs(sandbox(1500), 10, 20), 10_000);
    assert.equal(lostCallDurationMs(sandbox(1234), 600, 1.5), 1851, 'rounded');
    assert.equal(lostCallDurationMs(sandbox(1500), 60, Number.POSITIVE_INFINITY), 60_000, 'max speed: the limit');
    assert.equal(lostCallDurationMs(sandbox(1500), null, Number.POSITIVE_INFINITY), 1500, 'max speed and no agent: the wall time');
    assert.equal(lostCallDurationMs(sandbox(1500), null, 20), 30_000, 'no agent (deleted): still its own clock, uncapped');
    assert.equal(lostCallDurationMs(sandbox(0), null, 20), 0);
    assert.equal(lostCallDurationMs(sandbox(null), 60, 20), 0);
    assert.equal(lostCallDurationMs(sandbox(0), 60, Number.POSITIVE_INFINITY), 0);
  });
});


async function lostCall(ws: { workspaceId: string; agentId: string }, fields: Record<string, unknown> = {}) {
  const past = new Date(Date.now() - 60_000);
  return ringing(ws, undefined, { lease_holder: 'dead-process', lease_expires_at: past, answered_at: new Date(Date.now() - 120_000), last_renewed_at: past, live_elapsed_ms: 31_000, ...fields }, 'in_progress');
}

describe('endLost: calls whose owner died', () => {
  it('failed/media_error, runtime_lost, billed its own clock, call.error emitted; its complete raw blocks kept, the partial one deleted', async () => {
    const ws = await workspace();
    const call = await lostCall(ws);
    const block = Buffer.alloc(BLOCK_SAMPLES * 2);
    for (const track of ['caller', 'agent'] as const) await blobs.put(rawTrackKey(ws.workspaceId, call.id, track, 0), block, 'application/octet-stream');
    await blobs.put(rawTrackKey(ws.workspaceId, call.id, 'caller', 1), block, 'application/octet-stream');
    assert.equal(await ownership.endLost(), 1);
    const after = await callOf(call.id);
    assert.deepEqual([after.status, after.end_reason, after.duration_ms, after.billed_seconds], ['failed', 'media_error', 31_000, 31]);
    assert.deepEqual(after.error, { code: 'runtime_lost', message: 'the process running the call stopped; the call was ended by another worker' });
    assert.equal(Number(after.recording_samples), BLOCK_SAMPLES);
    assert.notEqual(await blobs.stat(rawTrackKey(ws.workspaceId, call.id, 'caller', 0)), null);
    assert.equal(await blobs.stat(rawTrackKey(ws.workspaceId, call.id, 'caller', 1)), null, 'the block being written is deleted');
    const events = await eventsOf(db, call.id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['call.error'],
    );
    assert.equal(events[0].data.code, 'runtime_lost');
    assert.equal(await ownership.endLost(), 0, 'ended once');
  });

  it('two sweeps at once (two workers) end a lost call once, and only one counts it', async () => {
    const ws = await workspace();
    const call = await lostCall(ws);
    const ended = await Promise.all([ownership.endLost(), ownership.endLost(), ownership.endLost()]);
    assert.equal(ended.reduce((sum, n) => sum + n, 0), 1, ended.join(', '));
    assert.deepEqual((await eventsOf(db, call.id)).map((e) => e.type), ['call.error']);
  });

  it('a deleted agent: billed without its limit; a lease not yet expired is left alone', async () => {
    const ws = await workspace();
    const lost = await lostCall(ws, { live_elapsed_ms: 95_000 });
    const alive = await lostCall(ws, { lease_expires_at: new Date(Date.now() + 60_000) });
    await db.updateTable('agents').set({ deleted_at: new Date() }).where('id', '=', ws.agentId).execute();
    assert.equal(await ownership.endLost(), 1);
    assert.equal((await callOf(lost.id)).duration_ms, 95_000);
    assert.equal((await callOf(alive.id)).status, 'in_progress');
  });

  it('the agent limit caps what is billed', async () => {
    const ws = await workspace();
    const lost = await lostCall(ws, { live_elapsed_ms: 95_000 });
    assert.equal(await worker.sweepOnce(), undefined);
    assert.equal((await callOf(lost.id)).duration_ms, 60_000);
  });
});

describe('renew: this process\'s live calls', () => {
  it('its lease pushed on, its length written; a hang-up asked elsewhere applied and cleared', async () => {
    const ws = await workspace();
    const call = await ringing(ws, undefined, { simulation: talkative(), lease_expires_at: new Date(Date.now() + 5000) });
    const running = runner.runOutbound(call);
    await connected(call.id);
    const before = Date.now();
    await db.updateTable('calls').set({ control: JSON.stringify({ action: 'hangup' }) }).where('id', '=', call.id).execute();
    await ownership.renew();
    const renewed = await callOf(call.id);
    assert.equal(renewed.control, null);
    assert.ok(new Date(renewed.lease_expires_at as Date).getTime() >= before + t.platform.config.calls.leaseMs);
    assert.ok(new Date(renewed.last_renewed_at as Date).getTime() >= before);
    assert.ok((renewed.live_elapsed_ms ?? 0) > 0);
    await running;
    assert.equal((await callOf(call.id)).end_reason, 'api_hangup');
  });

  it('a transfer asked elsewhere: transferred to its number', async () => {
    const ws = await workspace();
    const call = await ringing(ws, undefined, { simulation: talkative() });
    const running = runner.runOutbound(call);
    await connected(call.id);
    await db.updateTable('calls').set({ control: JSON.stringify({ action: 'transfer', to: '+15550100777' }) }).where('id', '=', call.id).execute();
    await worker.sweepOnce();
    await running;
    const after = await callOf(call.id);
    assert.deepEqual([after.status, after.transferred_to, after.control], ['transferred', '+15550100777', null]);
  });

  it('a live call with no control: nothing applied', async () => {
    const ws = await workspace();
    const call = await ringing(ws);
    const running = runner.runOutbound(call);
    await connected(call.id);
    await ownership.renew();
    await running;
    assert.equal((await callOf(call.id)).end_reason, 'caller_goodbye');
  });
});
