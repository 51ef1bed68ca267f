import assert from 'node:assert/strict';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { type CallJson, callSignature as signature, decodedMs } from '../../../test/support/recordings.ts';
import { as, createCallAgent, placeCall, waitForRecording } from './test-helpers.ts';

const TERMINAL = new Set(['completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled']);

// Sandbox calls run on virtual time (DESIGN part 9): the same agent and caller script give the same
// call on an idle machine and on one whose every core is taken, at any SANDBOX_SPEED. One scripted
// call alone, then the same call 20 times at once while worker threads spin on every core: every
// transcript (text, roles, times, interruptions, latencies, timings), duration, cost and latency
// summary is the lone call's, and every recording decodes to the call's duration. The speed changes
// nothing either: the lone call at each speed is the first speed's.

const SCRIPT = ['Hi, what time do you open tomorrow?', { text: 'Sorry, I have to go. Goodbye!', interrupt_after_ms: 1200 }];
const LATENCY = { stt_ms: 300, llm_first_token_ms: 700, tts_first_audio_ms: 250 };
const AT_ONCE = 20;

/** Worker threads that spin until terminated, one per core: a machine with no idle core. */
function hogEveryCore(): () => Promise<void> {
  const hogs = Array.from({ length: os.availableParallelism() }, () => new Worker('for (;;) {}', { eval: true, execArgv: [] }));
  return async () => {
    await Promise.all(hogs.map((hog) => hog.terminate()));
  };
}


/** The first speed's lone call: every other speed must give the very same call. */
let firstSpeed: { speed: string; signature: ReturnType<typeof signature> } | null = null;

for (const speed of ['max', '20', '1']) {
  describe(`a scripted sandbox call at SANDBOX_SPEED ${speed}`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ env: { SANDBOX_SPEED: speed } });
      t.modules.calls.worker.start();
      t.modules.calls.postCall.start();
    });

    /** Every call ended, polled gently: a tight poll per call would take the event loop from the calls. */
    async function waitForAll(user: Awaited<ReturnType<typeof signUp>>, ids: string[]) {
      const deadline = Date.now() + 600_000;
      const ended = new Map<string, CallJson>();
      while (ended.size < ids.length) {
        assert.ok(Date.now() < deadline, `${ids.length - ended.size} calls still running after 10 minutes`);
        await t.modules.calls.worker.runDueOnce();
        for (const id of ids.filter((id) => !ended.has(id))) {
          const call = (await t.request({ method: 'GET', url: `/v1/calls/${id}`, ...as(user) })).json();
          if (TERMINAL.has(call.status)) ended.set(id, call);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      return ids.map((id) => ended.get(id) as CallJson);
    }

    async function run(user: Awaited<ReturnType<typeof signUp>>, agentId: string, count: number) {
      const placed = await Promise.all(Array.from({ length: count }, () => placeCall(t, user, { agent_id: agentId, to: '+15550100200', simulation: { caller_script: SCRIPT, latency: LATENCY } })));
      return waitForAll(user, placed.map((call) => call.id));
    }

    /** Each call's recording, once stored, decodes to the call's duration. */
    async function checkRecordings(user: Awaited<ReturnType<typeof signUp>>, calls: CallJson[]) {
      for (const call of calls) {
        const ms = await decodedMs(await waitForRecording(t, user, call.id));
        assert.ok(Math.abs(ms - call.duration_ms) <= 40, `recording ${ms} ms, call ${call.duration_ms} ms`);
      }
    }

    it('gives the lone call and 20 at once on a saturated machine the same transcript, times, cost and recording length', async () => {
      const user = await signUp(t);
      await t.platform.db.updateTable('workspaces').set({ max_concurrent_calls: AT_ONCE }).where('id', '=', user.workspaceId).execute();
      const agent = await createCallAgent(t, user);
      const [lone] = await run(user, agent.id, 1);
      await checkRecordings(user, [lone]);
      const expected = signature(lone);
      if (firstSpeed) assert.deepEqual(expected, firstSpeed.signature, `SANDBOX_SPEED ${speed} against ${firstSpeed.speed}`);
      else firstSpeed = { speed, signature: expected };
      assert.equal(lone.status, 'completed');
      assert.equal(lone.end_reason, 'caller_goodbye');
      assert.deepEqual(
        lone.transcript.map((e) => e.role),
        ['agent', 'user', 'agent', 'user', 'agent'],
      );
      assert.ok(lone.transcript.some((e) => e.interrupted), 'the second line cuts the agent short');
      // Simulated latencies are the turn's timings exactly: the platform's own work took no call time.
      for (const entry of lone.transcript.filter((e) => e.timings)) {
        assert.deepEqual(entry.timings, { stt_ms: 300, stt_wait_ms: 300, llm_first_token_ms: 700, tts_first_audio_ms: 250 });
        assert.ok((entry.latency_ms ?? 0) >= 1250, `latency ${entry.latency_ms}`);
      }

      const stop = hogEveryCore();
      let crowd: CallJson[];
      try {
        crowd = await run(user, agent.id, AT_ONCE);
      } finally {
        await stop();
      }
      for (const call of crowd) assert.deepEqual(signature(call), expected, `call ${call.id}`);
      // The recordings are made after the calls, in the background lane (which yields to the hogs).
      await checkRecordings(user, crowd);
      const listed = await t.request({ method: 'GET', url: `/v1/calls?limit=100`, ...as(user) });
      assert.equal(listed.json().data.length, AT_ONCE + 1);
    });

    after(async () => {
      await t.modules.calls.worker.stop();
      await t.modules.calls.postCall.stop();
    });
  });
}
