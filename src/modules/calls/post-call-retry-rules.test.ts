import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, it } from 'node:test';
import { callOf, eventsOf, insertCallRow, ms, seedWorkspace, T0 } from '../../../test/support/call-rows.ts';
import { agentWithExtraction, postCallRig, putRawTracks, synthTracks } from '../../../test/support/post-call-rig.ts';
import { createCpuPool } from '../../platform/cpu-pool.ts';
import { AppError } from '../../platform/errors.ts';

// The post-call job's attempts (post-call.ts), on the real database, a real fs BlobStore and the
// fake OpenAI server, with a manual clock: a failed step is due again after the schedule's gap
// (exactly), its attempt counted and its error kept; after the last attempt it is failed and
// call.ended goes out once; a CPU pool too busy (here: closed) gives the attempt back and waits
// one second, even on the last attempt; a worker lost during the last attempt fails what is left;
// an empty schedule allows one attempt. Schedule [0, 2 s, 7 s]: three attempts, gaps 2 s and 5 s.

const rig = await postCallRig();
const { db, clock, blobs, fake, encodes, hooks } = rig;
const ws = await seedWorkspace(db);
await agentWithExtraction(db, ws.agentId);
const job = rig.job({ schedule: [0, 2000, 7000] });
const closedPool = createCpuPool({ threads: 1, backgroundThreads: 1 });
await closedPool.close();
const busyJob = rig.job({ schedule: [0, 2000, 7000], cpu: closedPool });
const SAMPLES = 8000;

beforeEach(async () => {
  await db.updateTable('calls').set({ post_call_due_at: null }).execute();
  clock.set(T0);
  encodes.length = 0;
  fake.requests.length = 0;
  hooks.beforeEncode = null;
});

async function ended(fields: Record<string, unknown> = {}) {
  const row = await insertCallRow(db, ws, 'completed', {
    end_reason: 'caller_goodbye', ended_at: T0, duration_ms: 500, billed_seconds: 1, cost_micros: 1500, post_call_due_at: T0,
    recording_status: 'pending', analysis_status: 'pending', recording_samples: SAMPLES,
    transcript: JSON.stringify([{ role: 'user', text: 'ann@example.com', start_ms: 0, end_ms: 1 }]), ...fields,
  });
  await putRawTracks(blobs, ws.workspaceId, row.id, synthTracks(SAMPLES));
  return row;
}

const failing = { error: { status: 400, message: 'the model refuses' } };
const endedEvents = async (id: string) => (await eventsOf(db, id)).filter((e) => e.type === 'call.ended').length;

describe('a step that keeps failing', () => {
  it('the extraction: due again after each gap of the schedule, then failed at the third attempt; the recording done once', async () => {
    const row = await ended();
    fake.reply(failing);
    assert.equal(await job.runDueOnce(), 1);
    let after = await callOf(db, row.id);
    assert.deepEqual(
      [after.recording_status, after.analysis_status, after.post_call_attempts, ms(after.post_call_due_at), after.post_call_lease_holder, after.ended_event_at],
      ['ready', 'pending', 1, T0.getTime() + 2000, null, null],
    );
    assert.match(after.analysis_error ?? '', /^LLM extraction failed: .*the model refuses/);
    assert.equal(await endedEvents(row.id), 0);

    clock.set(new Date(T0.getTime() + 1999));
    assert.equal(await job.runDueOnce(), 0, 'not before its time');
    clock.set(new Date(T0.getTime() + 2000));
    fake.reply(failing);
    assert.equal(await job.runDueOnce(), 1);
    after = await callOf(db, row.id);
    assert.deepEqual([after.post_call_attempts, ms(after.post_call_due_at)], [2, T0.getTime() + 7000]);

    clock.set(new Date(T0.getTime() + 7000));
    fake.reply(failing);
    assert.equal(await job.runDueOnce(), 1);
    after = await callOf(db, row.id);
    assert.deepEqual([after.analysis_status, after.recording_status, after.post_call_attempts, ms(after.ended_event_at)], ['failed', 'ready', 3, T0.getTime() + 7000]);
    assert.match(after.analysis_error ?? '', /the model refuses/);
    assert.deepEqual([encodes.length, fake.requests.length], [1, 3]);
    assert.equal(await endedEvents(row.id), 1);
    assert.deepEqual(await rig.failuresCounted(), { analysis: 1 });
  });

  it('the recording: its error kept at each retry, failed after the last attempt with that error', async () => {
    const row = await ended({ analysis_status: null });
    // A directory where the MP3 goes: every attempt to store it fails.
    fs.mkdirSync(path.join(rig.dir, 'recordings', ws.workspaceId, `${row.id}.mp3`, 'in-the-way'), { recursive: true });
    assert.equal(await job.runDueOnce(), 1);
    let after = await callOf(db, row.id);
    assert.deepEqual([after.recording_status, after.post_call_attempts, ms(after.post_call_due_at)], ['pending', 1, T0.getTime() + 2000]);
    assert.ok((after.recording_error ?? '').length > 0);
    for (const at of [2000, 7000]) {
      clock.set(new Date(T0.getTime() + at));
      assert.equal(await job.runDueOnce(), 1);
    }
    after = await callOf(db, row.id);
    assert.deepEqual([after.recording_status, after.post_call_attempts, ms(after.ended_event_at), after.recording_key], ['failed', 3, T0.getTime() + 7000, null]);
    assert.notEqual(after.recording_error, 'the worker was lost during the last attempt', 'the last attempt ran');
    assert.ok((after.recording_error ?? '').length > 0);
    assert.equal(encodes.length, 3);
    const events = await eventsOf(db, row.id);
    assert.deepEqual(events.filter((e) => e.type === 'call.ended').map((e) => e.data.recording_url), [null]);
    assert.equal((await rig.failuresCounted()).recording, 1);
  });

  it('an empty schedule allows one attempt', async () => {
    const once = rig.job({ schedule: [] });
    const row = await ended({ recording_status: null });
    fake.reply(failing);
    assert.equal(await once.runDueOnce(), 1);
    const after = await callOf(db, row.id);
    assert.deepEqual([after.analysis_status, after.post_call_attempts, ms(after.ended_event_at)], ['failed', 1, T0.getTime()]);
  });
});

describe('a CPU pool too busy for the MP3', () => {
  it('the attempt is given back and due again in one second, its error kept; even on the last attempt', async () => {
    for (const attempts of [0, 2]) {
      const row = await ended({ analysis_status: null, post_call_attempts: attempts });
      clock.set(T0);
      assert.equal(await busyJob.runDueOnce(), 1);
      const after = await callOf(db, row.id);
      assert.deepEqual(
        [after.recording_status, after.post_call_attempts, ms(after.post_call_due_at), after.post_call_lease_holder, after.ended_event_at],
        ['pending', attempts, T0.getTime() + 1000, null, null],
        `after ${attempts} attempts`,
      );
      assert.match(after.recording_error ?? '', /shutting down/);
      await db.updateTable('calls').set({ post_call_due_at: null }).where('id', '=', row.id).execute();
    }
  });

  it('busy together with a failing extraction: the attempt counts, the schedule\'s gap; on the last attempt both fail', async () => {
    const row = await ended();
    fake.reply(failing);
    assert.equal(await busyJob.runDueOnce(), 1);
    let after = await callOf(db, row.id);
    assert.deepEqual([after.post_call_attempts, ms(after.post_call_due_at)], [1, T0.getTime() + 2000]);
    assert.match(after.recording_error ?? '', /shutting down/);
    assert.match(after.analysis_error ?? '', /the model refuses/);

    await db.updateTable('calls').set({ post_call_attempts: 2 }).where('id', '=', row.id).execute();
    clock.set(new Date(T0.getTime() + 2000));
    fake.reply(failing);
    assert.equal(await busyJob.runDueOnce(), 1);
    after = await callOf(db, row.id);
    assert.deepEqual([after.recording_status, after.analysis_status, after.post_call_attempts, ms(after.ended_event_at)], ['failed', 'failed', 3, T0.getTime() + 2000]);
  });

  it('another AppError than service_unavailable is a failure like any other: the attempt counts, the schedule\'s gap', async () => {
    const row = await ended({ analysis_status: null });
    hooks.beforeEncode = async () => {
      throw new AppError('invalid_state', 'the encoder refused');
    };
    assert.equal(await job.runDueOnce(), 1);
    const after = await callOf(db, row.id);
    assert.deepEqual([after.post_call_attempts, ms(after.post_call_due_at), after.recording_error], [1, T0.getTime() + 2000, 'the encoder refused']);
  });
});

describe('a worker lost during the last attempt', () => {
  it('the next claim (past the attempts allowed) fails the pending steps without running them', async () => {
    const row = await ended({ post_call_attempts: 3 });
    assert.equal(await job.runDueOnce(), 1);
    assert.deepEqual([encodes.length, fake.requests.length], [0, 0]);
    const after = await callOf(db, row.id);
    const lost = 'the worker was lost during the last attempt';
    assert.deepEqual(
      [after.recording_status, after.recording_error, after.analysis_status, after.analysis_error, after.post_call_attempts, ms(after.ended_event_at)],
      ['failed', lost, 'failed', lost, 4, T0.getTime()],
    );
    assert.equal(await endedEvents(row.id), 1);
  });

  it('the last attempt itself (attempts allowed, not past them) runs its steps', async () => {
    const row = await ended({ post_call_attempts: 2 });
    fake.reply({ content: JSON.stringify({ email: 'ann@example.com' }) });
    assert.equal(await job.runDueOnce(), 1);
    const after = await callOf(db, row.id);
    assert.deepEqual([after.recording_status, after.analysis_status, after.extracted, after.post_call_attempts], ['ready', 'ready', { email: 'ann@example.com' }, 3]);
  });
});
