import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventsOf } from '../../../test/support/call-rows.ts';
import { runnerRig, SANDBOX_NUMBERS } from '../../../test/support/runner-rig.ts';
import type { CallMedia, CallSimulation, SandboxTelephony } from '../../ports/telephony.ts';

// The call runner (runner.ts) once a call is connected, on the real sandbox at SANDBOX_SPEED=max:
// the wallet's budget (PRICE_CALL_PER_MIN_USD 0.09: 1,500 micro-USD a second; web voice 0.05),
// a hang-up and a transfer of the live call, a failure in the runtime, the registry while it runs.

const { db, t, runner, workspace, ringing, connected, talkative, callOf } = await runnerRig();

/** A sandbox inbound call's media, connected. */
function inbound(callId: string, simulation: CallSimulation | null = null): CallMedia {
  const telephony = t.platform.providers.telephony as SandboxTelephony;
  return telephony.acceptInbound({ callId, from: '+15550100001', to: '+15550100002', simulation });
}

describe('the wallet ends the call', () => {
  it('a balance of 3,000 (2 s): insufficient_balance, billed at most the 2 affordable seconds', async () => {
    const ws = await workspace(3000);
    const row = await ringing(ws, undefined, { simulation: talkative() });
    await runner.runOutbound(row);
    const call = await callOf(row.id);
    assert.equal(call.status, 'completed');
    assert.equal(call.end_reason, 'insufficient_balance');
    assert.equal(call.duration_ms, 1980, 'one frame before the last affordable second is done');
    assert.equal(call.billed_seconds, 2);
  });

  it('an empty wallet: ended at once, 0 ms', async () => {
    const ws = await workspace(0);
    const row = await ringing(ws, undefined, { simulation: talkative() });
    await runner.runOutbound(row);
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason, call.duration_ms, Number(call.cost_micros)], ['completed', 'insufficient_balance', 0, 0]);
  });

  it('a web session is budgeted at the web voice rate (3,000 affords 3 s at 833 a second)', async () => {
    const ws = await workspace(3000);
    const row = await ringing(ws, undefined, { direction: 'web' });
    await runner.answer(row, inbound(row.id, JSON.parse(talkative())));
    const call = await callOf(row.id);
    assert.equal(call.end_reason, 'insufficient_balance');
    assert.ok((call.duration_ms ?? 0) > 2000 && (call.duration_ms ?? 0) <= 3000, `duration ${call.duration_ms}`);
  });
});

describe('a live call', () => {
  it('is counted by transport and measured while it runs; a hang-up ends it: api_hangup', async () => {
    const ws = await workspace();
    const row = await ringing(ws, undefined, { simulation: talkative() });
    const running = runner.runOutbound(row);
    await connected(row.id);
    assert.deepEqual([...runner.mediaSessions()], [['sandbox', 1]]);
    assert.ok(runner.liveElapsed()[0].elapsedMs > 0);
    assert.equal(runner.hangup(row.id), true);
    await running;
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason], ['completed', 'api_hangup']);
    assert.ok((call.duration_ms ?? 0) > 0);
    assert.deepEqual([...runner.mediaSessions()], []);
  });

  it('a transfer hands it on: transferred, to the number asked', async () => {
    const ws = await workspace();
    const row = await ringing(ws, undefined, { simulation: talkative() });
    const running = runner.runOutbound(row);
    await connected(row.id);
    assert.equal(runner.transfer(row.id, '+15550100999'), true);
    await running;
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason, call.transferred_to], ['transferred', 'transferred', '+15550100999']);
    const transfers = (await eventsOf(db, row.id)).filter((e) => e.type === 'call.transfer');
    assert.deepEqual(transfers.map((e) => e.data), [{ to: '+15550100999', reason: 'requested through the API' }]);
  });

  it('a failure in the runtime: failed/media_error, runtime_error, the registry emptied', async () => {
    const ws = await workspace();
    await db.updateTable('agents').set({ llm: JSON.stringify({ provider: 'openai-realtime', model: 'gpt-realtime' }) }).where('id', '=', ws.agentId).execute();
    const row = await ringing(ws);
    await runner.runOutbound(row);
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason, call.duration_ms], ['failed', 'media_error', 0]);
    assert.deepEqual(call.error, { code: 'runtime_error', message: 'the call failed in the runtime' });
    assert.ok(call.answered_at);
    assert.equal(runner.size, 0);
  });

  it('a failure in the runtime before the session runs hangs the connected call up (the line is not left open)', async () => {
    const ws = await workspace();
    await db.updateTable('agents').set({ llm: JSON.stringify({ provider: 'openai-realtime', model: 'gpt-realtime' }) }).where('id', '=', ws.agentId).execute();
    const row = await ringing(ws);
    const media = inbound(row.id);
    const hungUp: unknown[] = [];
    const hangup: CallMedia['hangup'] = (reason) => {
      hungUp.push(reason);
      return media.hangup(reason);
    };
    await runner.answer(row, { ...media, hangup });
    assert.deepEqual(hungUp, ['media_error']);
    assert.equal((await callOf(row.id)).end_reason, 'media_error');
  });

  it('its raw recording cannot be stored: the call still ends, its recording failed with the reason', async () => {
    const blobs = t.platform.providers.blobs;
    const put = blobs.put;
    blobs.put = async () => {
      throw new Error('disk full');
    };
    try {
      const ws = await workspace();
      const row = await ringing(ws);
      await runner.runOutbound(row);
      const call = await callOf(row.id);
      assert.deepEqual([call.status, call.recording_status, call.recording_error], ['completed', 'failed', 'the raw recording could not be stored']);
    } finally {
      blobs.put = put;
    }
  });

  it('its events go to the agent\'s webhook, call.started first', async () => {
    const ws = await workspace();
    const row = await ringing(ws);
    await runner.runOutbound(row);
    const events = await eventsOf(db, row.id);
    assert.equal(events[0].type, 'call.started');
    assert.ok(events.some((e) => e.type === 'call.transcript'));
    assert.ok(events.every((e) => e.agentId === ws.agentId));
    assert.equal((await callOf(row.id)).status, 'completed');
  });

  it('a media error mid-call: its end reason kept, call.error sent, the provider error counted', async () => {
    const mediaErrorsCounted = async () => (await t.platform.metrics.voice.providerErrors.get()).values.find((v) => v.labels.kind === 'media_error')?.value ?? 0;
    const countedBefore = await mediaErrorsCounted();
    const ws = await workspace();
    const row = await ringing(ws, SANDBOX_NUMBERS.mediaError);
    await runner.runOutbound(row);
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason], ['failed', 'media_error']);
    assert.ok(call.error, 'its error kept');
    const errors = (await eventsOf(db, row.id)).filter((e) => e.type === 'call.error');
    assert.deepEqual(errors.map((e) => e.data), [{ code: 'media_error', message: 'the media stream closed unexpectedly' }]);
    assert.equal(await mediaErrorsCounted(), countedBefore + 1, 'counted by kind');
  });
});
