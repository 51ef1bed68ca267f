import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventsOf } from '../../../test/support/call-rows.ts';
import { runnerRig, SANDBOX_NUMBERS } from '../../../test/support/runner-rig.ts';

// The call runner (runner.ts) run directly on the real sandbox at SANDBOX_SPEED=max: how a call
// that never connects ends (busy, no answer, failed to connect, agent deleted, hung up while
// dialing, its answer refused), how a connected one ends and is billed, and the registry of live calls.

const { db, t, runner, workspace, ringing, callOf } = await runnerRig();
const telephony = t.platform.providers.telephony;

/** Runs `body` with the sandbox's dial replaced by `dial` (given the real one), then puts it back. */
async function withDial(dial: (real: typeof telephony.dial, input: Parameters<typeof telephony.dial>[0]) => ReturnType<typeof telephony.dial>, body: () => Promise<void>) {
  const real = telephony.dial.bind(telephony);
  telephony.dial = (input) => dial(real, input);
  try {
    await body();
  } finally {
    telephony.dial = real;
  }
}

describe('a call that never connects', () => {
  const unanswered = [
    { name: 'busy', number: SANDBOX_NUMBERS.busy, status: 'busy' },
    { name: 'no answer', number: SANDBOX_NUMBERS.noAnswer, status: 'no_answer' },
  ] as const;
  for (const { name, number, status } of unanswered) {
    it(`${name}: ${status}/${status}, 0 ms, no error`, async () => {
      const row = await ringing(await workspace(), number);
      await runner.runOutbound(row);
      const call = await callOf(row.id);
      assert.deepEqual([call.status, call.end_reason, call.duration_ms, call.error], [status, status, 0, null]);
    });
  }

  it('failed to connect: failed/failed_to_connect with the carrier message', async () => {
    const ws = await workspace();
    const row = await ringing(ws, SANDBOX_NUMBERS.failsToConnect);
    await runner.runOutbound(row);
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason, call.duration_ms], ['failed', 'failed_to_connect', 0]);
    const error = call.error as { code: string; message: string };
    assert.equal(error.code, 'failed_to_connect');
    assert.ok(error.message.length > 0, 'the carrier message is kept');
  });

  it('agent deleted: failed/failed_to_connect, agent_missing, never dialed', async () => {
    const ws = await workspace();
    await db.updateTable('agents').set({ deleted_at: new Date() }).where('id', '=', ws.agentId).execute();
    const row = await ringing(ws);
    await runner.runOutbound(row);
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason, call.duration_ms, call.answered_at], ['failed', 'failed_to_connect', 0, null]);
    assert.deepEqual(call.error, { code: 'agent_missing', message: 'the agent was deleted' });
  });

  it('hung up while dialing: canceled/api_hangup, 0 ms, never answered; a line that answers anyway is hung up', async () => {
    const ws = await workspace();
    const row = await ringing(ws);
    const hungUp: unknown[] = [];
    // A carrier that answers though the dial was abandoned (the abort reached it too late).
    const answersAnyway = async (real: typeof telephony.dial, input: Parameters<typeof telephony.dial>[0]): ReturnType<typeof telephony.dial> => {
      const dialed = await real({ ...input, signal: new AbortController().signal });
      if (dialed.kind !== 'answered') return dialed;
      const { media } = dialed;
      const hangup: typeof media.hangup = (reason) => {
        hungUp.push(reason ?? 'none');
        return media.hangup(reason);
      };
      return { kind: 'answered', media: { ...media, hangup } };
    };
    await withDial(answersAnyway, async () => {
      const running = runner.runOutbound(row);
      assert.deepEqual(runner.liveIds(), [row.id], 'live from the claim on');
      assert.equal(runner.size, 1);
      assert.deepEqual(runner.liveElapsed(), [{ id: row.id, elapsedMs: 0 }]);
      assert.deepEqual([...runner.mediaSessions()], [], 'no media session while dialing');
      assert.equal(runner.transfer(row.id, '+15550100999'), false, 'no transfer before it is connected');
      assert.equal(runner.hangup(row.id), true);
      await running;
    });
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason, call.duration_ms, call.answered_at], ['canceled', 'api_hangup', 0, null]);
    assert.equal(runner.size, 0);
    assert.deepEqual(runner.liveIds(), []);
    assert.deepEqual(hungUp, ['none']);
  });

  it('dials the call: its numbers and simulation, real time for a speech-to-speech agent only', async () => {
    const ws = await workspace();
    const asked: Array<Parameters<typeof telephony.dial>[0]> = [];
    await withDial(
      async (_real, input) => {
        asked.push(input);
        return { kind: 'busy' };
      },
      async () => {
        const row = await ringing(ws, SANDBOX_NUMBERS.busy, { from_number: '+15550100001', simulation: JSON.stringify({ caller_script: ['Hi'] }) });
        await runner.runOutbound(row);
        await db.updateTable('agents').set({ llm: JSON.stringify({ provider: 'openai-realtime', model: 'gpt-realtime' }) }).where('id', '=', ws.agentId).execute();
        await runner.runOutbound(await ringing(ws, SANDBOX_NUMBERS.busy));
      },
    );
    assert.deepEqual(
      asked.map((input) => [input.from, input.to, input.simulation, input.realTime]),
      [
        ['+15550100001', SANDBOX_NUMBERS.busy, { caller_script: ['Hi'] }, false],
        ['+15550001111', SANDBOX_NUMBERS.busy, null, true],
      ],
    );
  });

  it('a dial that throws: failed/media_error, runtime_error, nothing to hang up, the registry emptied', async () => {
    const ws = await workspace();
    const row = await ringing(ws);
    await withDial(
      async () => {
        throw new Error('the carrier API is down');
      },
      () => runner.runOutbound(row),
    );
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason, call.duration_ms, call.answered_at], ['failed', 'media_error', 0, null]);
    assert.deepEqual(call.error, { code: 'runtime_error', message: 'the call failed in the runtime' });
    assert.equal(runner.size, 0);
  });

  it('its answer refused (the lease is another holder\'s): hung up, the row left as it was', async () => {
    const ws = await workspace();
    const row = await ringing(ws, undefined, { lease_holder: 'another-process' });
    await runner.runOutbound(row);
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason, call.answered_at, call.lease_holder], ['ringing', null, null, 'another-process']);
    assert.deepEqual(await eventsOf(db, row.id), []);
    assert.equal(runner.size, 0);
  });
});

describe('a hang-up between the answer and the session', () => {
  it('takes effect once the session runs: completed/api_hangup, at once', async () => {
    const ws = await workspace();
    const row = await ringing(ws, undefined, { simulation: JSON.stringify({ caller_script: ['One?', 'Two?', 'Three?'] }) });
    // The hang-up comes while the call is answered but its conversation not yet set up (the
    // runner reads the media's recogniser then).
    const hangsUpOnSetup = async (real: typeof telephony.dial, input: Parameters<typeof telephony.dial>[0]): ReturnType<typeof telephony.dial> => {
      const dialed = await real(input);
      if (dialed.kind !== 'answered') return dialed;
      const media = { ...dialed.media };
      Object.defineProperty(media, 'stt', {
        get: () => {
          assert.deepEqual(runner.liveElapsed(), [{ id: row.id, elapsedMs: 0 }], 'no session yet');
          runner.hangup(row.id);
          return dialed.media.stt;
        },
      });
      return { kind: 'answered', media };
    };
    await withDial(hangsUpOnSetup, () => runner.runOutbound(row));
    const call = await callOf(row.id);
    assert.deepEqual([call.status, call.end_reason], ['completed', 'api_hangup']);
    assert.ok(call.answered_at);
    assert.ok((call.duration_ms ?? 0) < 1000, `duration ${call.duration_ms}`);
  });
});

describe('the registry', () => {
  it('hangup and transfer of a call not run here answer false', () => {
    assert.equal(runner.hangup('call_unknown'), false);
    assert.equal(runner.transfer('call_unknown', '+15550100999'), false);
    assert.equal(runner.ended('call_unknown'), undefined);
  });

  it('ended(): the run of a call while it runs, undefined once it ended', async () => {
    const ws = await workspace();
    const row = await ringing(ws, SANDBOX_NUMBERS.busy);
    const running = runner.runOutbound(row);
    const ended = runner.ended(row.id);
    assert.ok(ended);
    await ended;
    assert.equal((await callOf(row.id)).status, 'busy', 'ended() resolves once the final transaction committed');
    await running;
    assert.equal(runner.ended(row.id), undefined);
  });
});

describe('a connected call', () => {
  it('completes: in_progress then completed, its duration its own clock, its raw tracks stored, billed', async () => {
    const ws = await workspace();
    const row = await ringing(ws);
    await runner.runOutbound(row);
    const call = await callOf(row.id);
    assert.equal(call.status, 'completed');
    assert.equal(call.end_reason, 'caller_goodbye');
    assert.ok(call.answered_at);
    assert.ok((call.duration_ms ?? 0) > 1000, `duration ${call.duration_ms}`);
    assert.ok((call.transcript as unknown[]).length >= 3);
    assert.ok(Number(call.recording_samples) > 0, 'the raw tracks were stored');
    assert.equal(call.recording_error, null);
    assert.ok(Number(call.cost_micros) > 0);
    const types = (await eventsOf(db, row.id)).map((e) => e.type);
    assert.equal(types[0], 'call.started');
    assert.ok(types.includes('call.transcript'));
  });
});
