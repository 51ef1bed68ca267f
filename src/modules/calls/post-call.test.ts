import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { decodedMs } from '../../../test/support/recordings.ts';
import { cpuTask } from '../../platform/cpu-pool.ts';
import type * as heldTasks from '../../platform/cpu-pool.test-tasks.ts';
import { holdersStarted, newGate, openGate } from '../../platform/cpu-pool.test-tasks.ts';
import { encodeMp3 } from '../../platform/audio/mp3.ts';
import { BLOCK_SAMPLES } from '../../runtime/audio/recorder.ts';
import { startReceiver } from '../webhooks/test-receiver.ts';
import { rawTrackKey } from './raw-tracks.ts';
import { as, createCallAgent, placeCall, waitForPostCall, waitForRecording, waitForTerminal } from './test-helpers.ts';

// After the call (DESIGN part 9): the status is terminal when the conversation ends; the raw
// tracks are in the BlobStore until the post-call job has stored the MP3; the recording answers
// 409 recording_not_ready meanwhile; a failing step is retried then `failed`; call.ended and the
// outcome event go out once, after both steps settled, whatever happens to the job's workers.
// The job is driven by runDueOnce here (the test app starts no worker).

const t = await buildTestApp({
  env: { SANDBOX_SPEED: '50', POST_CALL_RETRY_SCHEDULE: '0,100ms,200ms', LLM_BASE_URL: 'http://127.0.0.1:9/v1', LLM_API_KEY: 'sk-test' },
});
const receiver = await startReceiver();
after(() => receiver.close());
const topic = [{ name: 'topic', type: 'string', description: 'what the caller asked about' }];


/** The call's events of `type` written to the outbox. */
async function eventsOf(callId: string, type: string) {
  return t.platform.db.selectFrom('webhook_events').select(['payload']).where('call_id', '=', callId).where('type', '=', type).execute();
}

async function rowOf(callId: string) {
  return t.platform.db.selectFrom('calls').selectAll().where('id', '=', callId).executeTakeFirstOrThrow();
}

/** The raw blocks of a call that exist now. */
async function rawBlocks(user: TestUser, callId: string, samples: number): Promise<number> {
  let found = 0;
  for (let index = 0; index < Math.ceil(samples / BLOCK_SAMPLES); index++) {
    for (const track of ['caller', 'agent'] as const) if (await t.platform.providers.blobs.stat(rawTrackKey(user.workspaceId, callId, track, index))) found++;
  }
  return found;
}

async function endedCall(app: TestApp, fields: Record<string, unknown> = {}, script?: string[]) {
  const user = await signUp(app);
  const agent = await createCallAgent(app, user, { webhook_url: receiver.url, extraction_fields: topic, ...fields });
  const placed = await placeCall(app, user, { agent_id: agent.id, to: '+15550100200', ...(script ? { simulation: { caller_script: script } } : {}) });
  const call = await waitForTerminal(app, user, placed.id);
  return { user, agent, call };
}

describe('after the call', () => {
  it('terminal at once; raw tracks until the MP3 is stored; 409 recording_not_ready while pending; call.ended once, after', async () => {
    const { user, call } = await endedCall(t, {}, ['Hello, are you open tonight?', 'Goodbye!']);
    assert.equal(call.status, 'completed');
    assert.equal(call.recording_status, 'pending');
    assert.equal(call.analysis_status, 'pending');
    assert.equal(call.recording_url, null);
    const row = await rowOf(call.id);
    assert.ok(row.recording_samples && row.recording_samples > 0);
    const blocks = Math.ceil(row.recording_samples / BLOCK_SAMPLES);
    assert.equal(await rawBlocks(user, call.id, row.recording_samples), blocks * 2, 'both tracks of every block are stored');
    assert.equal((await eventsOf(call.id, 'call.ended')).length, 0, 'call.ended waits for the recording and the analysis');

    for (const suffix of ['/recording', '/recording.mp3']) {
      const early = await t.request({ method: 'GET', url: `/v1/calls/${call.id}${suffix}`, ...as(user) });
      assert.equal(early.statusCode, 409, early.body);
      assert.match(String(early.headers['content-type']), /^application\/problem\+json/);
      assert.equal(early.json().code, 'recording_not_ready');
      assert.equal(early.headers['retry-after'], '5');
    }

    const mp3 = await waitForRecording(t, user, call.id);
    const ready = (await t.request({ method: 'GET', url: `/v1/calls/${call.id}`, ...as(user) })).json();
    assert.equal(ready.recording_status, 'ready');
    assert.equal(ready.analysis_status, 'ready');
    assert.equal(ready.recording_error, null);
    assert.ok(Object.hasOwn(ready.extracted, 'topic'));
    assert.equal(await rawBlocks(user, call.id, row.recording_samples), 0, 'the raw tracks are deleted once the MP3 is stored');
    // The MP3 is the recorded timeline, whole: it decodes as long as an MP3 of the raw tracks' length.
    const ms = await decodedMs(mp3);
    const expectedMs = await decodedMs(await encodeMp3(new Int16Array(row.recording_samples), 16_000));
    assert.ok(Math.abs(ms - expectedMs) <= 40, `MP3 ${ms} ms, an MP3 of the recorded length ${expectedMs} ms`);
    assert.ok(Math.abs(ms - ready.duration_ms) <= ready.duration_ms * 0.1, `MP3 ${ms} ms, call ${ready.duration_ms} ms`);
    await waitForPostCall(t, user, call.id);

    const ended = await eventsOf(call.id, 'call.ended');
    assert.equal(ended.length, 1);
    // Signed links of the app's own: the call's MP3 and transcript.
    const endedData = JSON.parse(ended[0].payload).data;
    assert.match(endedData.recording_url, new RegExp(`/v1/calls/${call.id}/recording\\.mp3\\?expires=\\d+&signature=`));
    assert.match(endedData.transcript_url, new RegExp(`/v1/calls/${call.id}/transcript\\?expires=\\d+&signature=`));
    const completed = await eventsOf(call.id, 'call.completed');
    assert.equal(completed.length, 1);
    assert.ok(Object.hasOwn(JSON.parse(completed[0].payload).data.extracted, 'topic'));
    await t.modules.calls.postCall.runDueOnce();
    assert.equal((await eventsOf(call.id, 'call.ended')).length, 1);
  });

  it('a call never answered has no recording and no analysis; its call.ended and call.failed still come from the job', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { webhook_url: receiver.url });
    const call = await waitForTerminal(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100101' })).id);
    assert.equal(call.status, 'busy');
    assert.equal(call.recording_status, null);
    assert.equal(call.analysis_status, null);
    assert.equal((await t.request({ method: 'GET', url: `/v1/calls/${call.id}/recording`, ...as(user) })).statusCode, 404);
    await waitForPostCall(t, user, call.id);
    assert.equal((await eventsOf(call.id, 'call.ended')).length, 1);
    assert.equal((await eventsOf(call.id, 'call.failed')).length, 1);
  });

  it('a recording that cannot be stored is retried, then failed with its error; call.ended goes out once without it', async () => {
    const { user, call } = await endedCall(t, {}, ['Goodbye!']);
    // A directory where the MP3 should go: every attempt to store it fails.
    fs.mkdirSync(path.join(t.dataDir, 'blobs', 'recordings', user.workspaceId, `${call.id}.mp3`, 'in-the-way'), { recursive: true });
    await t.modules.calls.postCall.runDueOnce();
    const retried = await rowOf(call.id);
    assert.equal(retried.recording_status, 'pending');
    assert.ok(retried.recording_error, 'the attempt\'s error is kept');
    assert.equal(retried.analysis_status, 'ready', 'the analysis does not wait for the recording');
    assert.equal(retried.ended_event_at, null);

    const failed = await waitForPostCall(t, user, call.id);
    assert.equal(failed.recording_status, 'failed');
    assert.ok(failed.recording_error.length > 0);
    assert.equal(failed.recording_url, null);
    assert.equal((await rowOf(call.id)).post_call_attempts, 3, 'POST_CALL_RETRY_SCHEDULE allows three attempts');
    assert.equal((await t.request({ method: 'GET', url: `/v1/calls/${call.id}/recording`, ...as(user) })).statusCode, 404);
    const ended = await eventsOf(call.id, 'call.ended');
    assert.equal(ended.length, 1);
    assert.equal(JSON.parse(ended[0].payload).data.recording_url, null);
  });

  it('an extraction that fails: analysis failed after the retries, the recording stored, call.ended and call.completed sent once', async () => {
    const { user, agent, call } = await endedCall(t, {}, ['My topic is the menu.', 'Goodbye!']);
    // From now on the agent's model is unreachable.
    const patched = await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, ...as(user), payload: { llm: { provider: 'openai', model: 'gpt-4o-mini' } } });
    assert.equal(patched.statusCode, 200, patched.body);
    const settled = await waitForPostCall(t, user, call.id);
    assert.equal(settled.analysis_status, 'failed');
    assert.ok(settled.analysis_error.length > 0);
    assert.equal(settled.recording_status, 'ready');
    assert.deepEqual(settled.extracted, {});
    assert.equal((await rowOf(call.id)).post_call_attempts, 3);
    assert.equal((await eventsOf(call.id, 'call.ended')).length, 1);
    const completed = await eventsOf(call.id, 'call.completed');
    assert.equal(completed.length, 1);
    assert.deepEqual(JSON.parse(completed[0].payload).data.extracted, {});
  });

  it('a worker that lost its lease mid-attempt: the call is claimed again, its late results are dropped, call.ended is sent once', async () => {
    const { user, call } = await endedCall(t, {}, ['Goodbye!']);
    // A worker claims the call and dies (it never records anything): its lease runs out.
    const dead = { holder: 'dead-worker', leaseMs: 50 };
    const claimed = await t.modules.calls.journal.claimPostCalls({ ...dead, limit: 1000 });
    assert.ok(claimed.some((row) => row.id === call.id));
    await new Promise((resolve) => setTimeout(resolve, 60));
    const done = await waitForPostCall(t, user, call.id);
    assert.equal(done.recording_status, 'ready');
    assert.equal((await rowOf(call.id)).post_call_attempts, 2);
    // The dead worker's results arrive late: none applies, nothing is emitted twice.
    const fence = { id: call.id, holder: dead.holder, attempt: 1 };
    assert.equal(await t.modules.calls.journal.recordingStored(fence, { key: 'recordings/elsewhere.mp3', bytes: 1 }), false);
    assert.equal(await t.modules.calls.journal.endPostCall(fence, null), false);
    await t.modules.calls.postCall.runDueOnce();
    assert.equal((await eventsOf(call.id, 'call.ended')).length, 1);
    assert.equal((await eventsOf(call.id, 'call.completed')).length, 1);
    assert.equal((await rowOf(call.id)).recording_key, `recordings/${user.workspaceId}/${call.id}.mp3`);
  });

  it('no recording, transcript or event is lost while the CPU pool is saturated', async () => {
    const { user, call } = await endedCall(t, {}, ['Hello, are you open tonight?', 'Goodbye!']);
    const cpu = t.platform.cpu;
    const gate = newGate();
    const hold = cpuTask<typeof heldTasks.hold>(new URL('../../platform/cpu-pool.test-tasks.ts', import.meta.url), 'hold');
    // Every thread held (the background lane's too), every place in the pool's queue taken.
    const holders = [
      ...Array.from({ length: cpu.threads + cpu.queue }, () => cpu.run(hold, { gate }, { timeoutMs: 120_000 })),
      ...Array.from({ length: cpu.backgroundThreads }, () => cpu.run(hold, { gate }, { lane: 'background', timeoutMs: 120_000 })),
    ];
    while (holdersStarted(gate) < cpu.threads + cpu.backgroundThreads) await new Promise((resolve) => setTimeout(resolve, 5));
    // The attempt cannot encode now: its background thread is taken, so it waits its turn.
    const attempt = t.modules.calls.postCall.runDueOnce();
    await Promise.race([attempt, new Promise((resolve) => setTimeout(resolve, 2000))]);
    const busy = await rowOf(call.id);
    assert.equal(busy.recording_status, 'pending');
    assert.equal(busy.ended_event_at, null);
    assert.equal((await eventsOf(call.id, 'call.ended')).length, 0);
    openGate(gate);
    await Promise.all(holders);
    await attempt;
    assert.ok((await waitForRecording(t, user, call.id)).length > 1000);
    const done = await waitForPostCall(t, user, call.id);
    assert.equal(done.recording_status, 'ready');
    assert.ok(done.transcript.length > 0);
    assert.equal((await eventsOf(call.id, 'call.ended')).length, 1);
    assert.ok((await rowOf(call.id)).post_call_attempts <= 2, 'a busy pool does not use up the attempts');
  });

  it('a worker stopping while its recording waits for a busy CPU pool stops at once; the call is recorded later, no attempt used', async () => {
    const { user, call } = await endedCall(t, {}, ['Hello, are you open tonight?', 'Goodbye!']);
    const cpu = t.platform.cpu;
    const gate = newGate();
    const hold = cpuTask<typeof heldTasks.hold>(new URL('../../platform/cpu-pool.test-tasks.ts', import.meta.url), 'hold');
    // Every thread held, the main ones too (a free main thread would take the encoding).
    const holders = [
      ...Array.from({ length: cpu.threads }, () => cpu.run(hold, { gate }, { timeoutMs: 120_000 })),
      ...Array.from({ length: cpu.backgroundThreads }, () => cpu.run(hold, { gate }, { lane: 'background', timeoutMs: 120_000 })),
    ];
    while (holdersStarted(gate) < cpu.threads + cpu.backgroundThreads) await new Promise((resolve) => setTimeout(resolve, 5));
    await t.modules.calls.postCall.start();
    // The worker has claimed the call and waits for the background thread, which stays held.
    while ((await rowOf(call.id)).post_call_attempts === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    let released = false;
    void Promise.all(holders).then(() => (released = true));
    await t.modules.calls.postCall.stop();
    assert.equal(released, false, 'stop() returned while the threads were still held');
    const stopped = await rowOf(call.id);
    assert.equal(stopped.recording_status, 'pending');
    assert.equal(stopped.post_call_attempts, 0, 'giving up on a stop does not use up an attempt');
    assert.equal((await eventsOf(call.id, 'call.ended')).length, 0);
    openGate(gate);
    await Promise.all(holders);
    const done = await waitForPostCall(t, user, call.id);
    assert.equal(done.recording_status, 'ready');
    assert.equal((await eventsOf(call.id, 'call.ended')).length, 1);
  });
});
