import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventsOf } from '../../../test/support/call-rows.ts';
import { runnerRig, SANDBOX_NUMBERS } from '../../../test/support/runner-rig.ts';
import { SAMPLE_RATE } from '../../platform/audio/frames.ts';
import type { RuntimeClock } from '../../ports/clock.ts';
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

/** `media` with its hang-ups recorded (their reasons, in order). */
function recordingHangups(media: CallMedia) {
  const hungUp: unknown[] = [];
  const hangup: CallMedia['hangup'] = (reason) => {
    hungUp.push(reason);
    return media.hangup(reason);
  };
  return { media: { ...media, hangup }, hungUp };
}

/** `clock` with its timers of exactly `targetMs` firing `lateByMs` late, as on a loaded machine. */
function lateTimers(clock: RuntimeClock, targetMs: number, lateByMs: number): RuntimeClock {
  return {
    now: () => clock.now(),
    scale: clock.scale,
    hold: clock.hold?.bind(clock),
    setTimer: (fn, ms) => clock.setTimer(fn, ms === targetMs ? ms + lateByMs : ms),
  };
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

  it('a budget timer that fires late: billed to the budget (2 s), not to when the timer got round to it', async () => {
    const ws = await workspace(3000);
    const row = await ringing(ws);
    const media = inbound(row.id, JSON.parse(talkative()));
    assert.ok(media.clock, 'a sandbox call brings its clock');
    await runner.answer(row, { ...media, clock: lateTimers(media.clock, 1980, 600) });
    const call = await callOf(row.id);
    assert.deepEqual([call.end_reason, call.duration_ms, call.billed_seconds], ['insufficient_balance', 2000, 2]);
  });

  it('at a price of 0 nothing is budgeted: the call runs to its end, free', async () => {
    const free = await runnerRig({ PRICE_CALL_PER_MIN_USD: '0' });
    const ws = await free.workspace(0);
    const row = await free.ringing(ws);
    await free.runner.runOutbound(row);
    const call = await free.callOf(row.id);
    assert.deepEqual([call.status, call.end_reason, Number(call.cost_micros)], ['completed', 'caller_goodbye', 0]);
    assert.ok((call.duration_ms ?? 0) > 1000, `duration ${call.duration_ms}`);
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
    const { media, hungUp } = recordingHangups(inbound(row.id));
    await runner.answer(row, media);
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

  it('a media that brings no recogniser, with none configured: failed/media_error, runtime_error, hung up', async () => {
    const ws = await workspace();
    const row = await ringing(ws);
    const { media, hungUp } = recordingHangups(inbound(row.id));
    assert.equal(t.platform.providers.stt, undefined, 'no STT_BASE_URL here');
    await runner.answer(row, { ...media, stt: undefined });
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason, call.duration_ms], ['failed', 'media_error', 0]);
    assert.deepEqual(call.error, { code: 'runtime_error', message: 'the call failed in the runtime' });
    assert.deepEqual(hungUp, ['media_error']);
  });

  it('runs on the media\'s clock, else a web session on the media clock and a phone call on the call clock', async () => {
    const { mediaClock, callClock } = t.platform.providers;
    const used: string[] = [];
    const spy = (clock: RuntimeClock, name: string) => {
      const setTimer = clock.setTimer;
      clock.setTimer = (fn, ms) => {
        used.push(name);
        return setTimer.call(clock, fn, ms);
      };
      return () => {
        clock.setTimer = setTimer;
      };
    };
    const restore = [spy(mediaClock, 'media'), spy(callClock, 'call')];
    try {
      // An empty wallet ends each at once: the budget's timer is the call's first.
      const ws = await workspace(0);
      for (const direction of ['web', 'inbound'] as const) {
        const row = await ringing(ws, undefined, { direction });
        used.length = 0;
        await runner.answer(row, { ...inbound(row.id), clock: undefined });
        assert.equal(used[0], direction === 'web' ? 'media' : 'call', direction);
        assert.equal((await callOf(row.id)).end_reason, 'insufficient_balance');
      }
      const row = await ringing(ws);
      used.length = 0;
      await runner.answer(row, inbound(row.id));
      assert.deepEqual(used, [], 'a sandbox call keeps its own virtual clock');
    } finally {
      for (const undo of restore) undo();
    }
  });

  it('its finish waits for its queued journal writes: every transcript event written when its run ends', async () => {
    const { journal } = t.modules.calls;
    const transcript = journal.transcript;
    // Slow writes: without the wait, the finish would pass them.
    journal.transcript = async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return transcript.apply(journal, args);
    };
    try {
      const ws = await workspace();
      const row = await ringing(ws);
      await runner.runOutbound(row);
      // Read as soon as the run ends: every entry's event is written by then.
      const sent = (await eventsOf(db, row.id)).filter((e) => e.type === 'call.transcript').length;
      const call = await callOf(row.id);
      assert.ok(sent >= 3, `${sent} sent`);
      assert.equal(sent, (call.transcript as unknown[]).length, 'each entry sent before the run ended');
    } finally {
      journal.transcript = transcript;
    }
  });

  it('its recording holds the whole call when it runs to its maximum duration', async () => {
    const ws = await workspace();
    await db.updateTable('agents').set({ max_duration_seconds: 2 }).where('id', '=', ws.agentId).execute();
    const row = await ringing(ws, undefined, { simulation: talkative() });
    await runner.runOutbound(row);
    const call = await callOf(row.id);
    assert.equal(call.end_reason, 'max_duration');
    assert.ok(Number(call.recording_samples) >= SAMPLE_RATE * 1.9, `samples ${call.recording_samples}`);
  });

  it('its turns are measured under its providers: the sandbox\'s recogniser, the agent\'s model, its voice\'s speech (unknown when none has it)', async () => {
    const { turnLatency, turnStage } = t.platform.metrics.voice;
    // These calls' observations only (the file's other calls have the seeded agent's).
    turnLatency.reset();
    turnStage.reset();
    // A builtin voice, then one no provider here has (the seeded agent's OpenAI voice, without OpenAI).
    for (const voice of ['builtin-ava', 'alloy']) {
      const ws = await workspace();
      await db.updateTable('agents').set({ voice, llm: JSON.stringify({ provider: 'builtin' }) }).where('id', '=', ws.agentId).execute();
      await runner.runOutbound(await ringing(ws));
    }
    const counted = async (metric: typeof turnLatency | typeof turnStage, key: (labels: Record<string, unknown>) => string) =>
      [...new Set((await metric.get()).values.filter((v) => v.metricName?.endsWith('_count') && v.value > 0).map((v) => key(v.labels)))].sort();
    assert.deepEqual(await counted(turnLatency, (l) => `${l.stt}/${l.llm}/${l.tts}`), ['sandbox/builtin/builtin', 'sandbox/builtin/unknown']);
    assert.deepEqual(await counted(turnStage, (l) => `${l.stage}/${l.provider}`), ['llm_first_token/builtin', 'stt/sandbox', 'tts_first_audio/builtin', 'tts_first_audio/unknown']);
  });
});
