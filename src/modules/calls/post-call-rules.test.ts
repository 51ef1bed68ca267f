import assert from 'node:assert/strict';
import os from 'node:os';
import { beforeEach, describe, it } from 'node:test';
import { callOf, eventsOf, insertCallRow, ms, seedWorkspace, T0 } from '../../../test/support/call-rows.ts';
import { agentWithExtraction, postCallRig, putRawTracks, rawBlocksLeft, synthTracks } from '../../../test/support/post-call-rig.ts';
import { encodeMp3 } from '../../platform/audio/mp3.ts';
import { BLOCK_SAMPLES } from '../../runtime/audio/recorder.ts';

// The post-call job (post-call.ts) built from its factory on the real database, a real fs
// BlobStore and the fake OpenAI server, driven by runDueOnce: the MP3 is exactly the encoding of
// the raw tracks mixed, stored under the call's key, the raw tracks deleted only once the row
// names it; the extraction reads the transcript with the agent's model; call.ended goes out once
// both steps settled; what a step that cannot succeed (content deleted, tracks missing, agent
// deleted) and a lease lost mid-attempt do. post-call-retry-rules.test.ts holds the attempts.

const rig = await postCallRig();
const { db, clock, blobs, fake, hooks, encodes } = rig;
const ws = await seedWorkspace(db);
await agentWithExtraction(db, ws.agentId);
const job = rig.job();
const SAMPLES = BLOCK_SAMPLES + 4000;
const transcript = [
  { role: 'agent', text: 'Hi, how can I help?', start_ms: 0, end_ms: 900 },
  { role: 'user', text: 'Mail me at ann@example.com', start_ms: 1000, end_ms: 2000 },
];

beforeEach(async () => {
  await db.updateTable('calls').set({ post_call_due_at: null }).execute();
  clock.set(T0);
  hooks.beforeEncode = null;
  encodes.length = 0;
  fake.requests.length = 0;
});

/** An ended call due for its post-call job now, its raw tracks stored (unless `tracks: false`). */
async function ended(fields: Record<string, unknown> = {}, tracks = true, where = ws) {
  const row = await insertCallRow(db, where, 'completed', {
    end_reason: 'caller_goodbye', ended_at: T0, duration_ms: 10_250, billed_seconds: 11, cost_micros: 16_500, post_call_due_at: T0,
    recording_status: 'pending', analysis_status: 'pending', recording_samples: SAMPLES, transcript: JSON.stringify(transcript), ...fields,
  });
  const audio = synthTracks(SAMPLES);
  if (tracks) await putRawTracks(blobs, where.workspaceId, row.id, audio);
  return { row, audio };
}

const mp3KeyOf = (id: string) => `recordings/${ws.workspaceId}/${id}.mp3`;

describe('both steps succeed', () => {
  it('the MP3 of the mixed tracks stored under the call, the extraction from the transcript with the agent\'s model, call.ended once', async () => {
    const { row, audio } = await ended();
    fake.reply({ content: JSON.stringify({ email: 'ann@example.com' }) });
    clock.advance(500);
    assert.equal(await job.runDueOnce(), 1);
    const now = clock.now().getTime();

    const expected = await encodeMp3(audio.mixed, 16_000);
    const stored = await blobs.get(mp3KeyOf(row.id));
    assert.ok(stored);
    assert.deepEqual([stored.contentType, stored.bytes.equals(expected)], ['audio/mpeg', true]);
    assert.equal(encodes.length, 1);
    assert.equal(encodes[0].lane, 'background');
    assert.ok(encodes[0].signal instanceof AbortSignal, 'the attempt\'s signal reaches the encoding');
    assert.equal(await rawBlocksLeft(blobs, ws.workspaceId, row.id, 3), 0, 'the raw tracks are deleted once the MP3 is named');

    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0].body.model, 'gpt-post-call');
    assert.equal(fake.requests[0].body.messages[1].content, 'agent: Hi, how can I help?\nuser: Mail me at ann@example.com');

    const after = await callOf(db, row.id);
    assert.deepEqual(
      [after.recording_status, after.recording_key, after.recording_bytes, after.recording_error, after.analysis_status, after.extracted, after.analysis_error],
      ['ready', mp3KeyOf(row.id), expected.length, null, 'ready', { email: 'ann@example.com' }, null],
    );
    assert.deepEqual([after.post_call_attempts, ms(after.ended_event_at), after.post_call_due_at, after.post_call_lease_holder], [1, now, null, null]);
    const events = await eventsOf(db, row.id);
    assert.deepEqual(events.map((e) => [e.type, e.agentId]), [['call.ended', ws.agentId], ['call.completed', ws.agentId]]);
    assert.equal(events[0].data.recording_url, `https://links.test/${row.id}/recording.mp3`);
    assert.deepEqual(events[1].data.extracted, { email: 'ann@example.com' });
    assert.equal(events[0].traceParent, null);
    assert.deepEqual(await rig.failuresCounted(), {});

    clock.advance(3_600_000);
    assert.equal(await job.runDueOnce(), 0, 'nothing is due any more');
    assert.equal((await eventsOf(db, row.id)).length, 2);
  });

  it('a call whose recording is null and analysis already ready: neither step runs, call.ended at once', async () => {
    const { row } = await ended({ recording_status: null, analysis_status: 'ready', extracted: JSON.stringify({ email: 'x@y.z' }) });
    assert.equal(await job.runDueOnce(), 1);
    assert.deepEqual([encodes.length, fake.requests.length], [0, 0]);
    assert.equal(await rawBlocksLeft(blobs, ws.workspaceId, row.id, 2), 4, 'no step touched the raw tracks');
    const after = await callOf(db, row.id);
    assert.deepEqual([after.recording_status, after.analysis_status, after.extracted, ms(after.ended_event_at)], [null, 'ready', { email: 'x@y.z' }, T0.getTime()]);
    assert.deepEqual((await eventsOf(db, row.id)).map((e) => e.type), ['call.ended', 'call.completed']);
  });

  it('a recording already ready is not redone; only the pending analysis runs', async () => {
    const { row } = await ended({ recording_status: 'ready', recording_key: 'recordings/earlier.mp3', recording_bytes: 10 });
    fake.reply({ content: JSON.stringify({ email: null }) });
    assert.equal(await job.runDueOnce(), 1);
    assert.deepEqual([encodes.length, fake.requests.length], [0, 1]);
    const after = await callOf(db, row.id);
    assert.deepEqual([after.recording_key, after.analysis_status, after.extracted], ['recordings/earlier.mp3', 'ready', { email: null }]);
  });
});

describe('steps that cannot succeed: failed at the first attempt, no retry', () => {
  it('the content was deleted: the raw tracks deleted, no MP3, recording failed', async () => {
    const { row } = await ended({ content_deleted_at: T0, analysis_status: null });
    assert.equal(await job.runDueOnce(), 1);
    assert.equal(encodes.length, 0);
    assert.equal(await blobs.stat(mp3KeyOf(row.id)), null);
    assert.equal(await rawBlocksLeft(blobs, ws.workspaceId, row.id, 3), 0);
    const after = await callOf(db, row.id);
    assert.deepEqual([after.recording_status, after.recording_error, after.post_call_attempts, ms(after.ended_event_at)], ['failed', "the call's content was deleted", 1, T0.getTime()]);
    assert.deepEqual(await rig.failuresCounted(), { recording: 1 });
  });

  it('a job built without a failure counter settles its failures all the same (recording, analysis)', async () => {
    const { row } = await ended({ content_deleted_at: T0, analysis_status: null });
    const orphaned = await seedWorkspace(db);
    await db.updateTable('agents').set({ deleted_at: T0 }).where('id', '=', orphaned.agentId).execute();
    const { row: unanalysed } = await ended({ recording_status: null }, false, orphaned);
    const counted = await rig.failuresCounted();
    assert.equal(await rig.job({ failures: undefined }).runDueOnce(), 2);
    const [recorded, analysed] = [await callOf(db, row.id), await callOf(db, unanalysed.id)];
    assert.deepEqual([recorded.recording_status, ms(recorded.ended_event_at)], ['failed', T0.getTime()]);
    assert.deepEqual([analysed.analysis_status, ms(analysed.ended_event_at)], ['failed', T0.getTime()]);
    assert.deepEqual(await rig.failuresCounted(), counted, 'nothing counted on the rig\'s counter');
  });

  it('the raw tracks are missing: recording failed naming the block, the analysis still done', async () => {
    const { row } = await ended({}, false);
    fake.reply({ content: JSON.stringify({ email: 'ann@example.com' }) });
    assert.equal(await job.runDueOnce(), 1);
    const after = await callOf(db, row.id);
    assert.deepEqual(
      [after.recording_status, after.recording_error, after.analysis_status, after.post_call_attempts, ms(after.ended_event_at)],
      ['failed', 'the raw recording block caller-00000.pcm is missing', 'ready', 1, T0.getTime()],
    );
    assert.equal((await eventsOf(db, row.id)).filter((e) => e.type === 'call.ended').length, 1);
  });

  it('the agent was deleted: analysis failed, no model asked, the recording still stored', async () => {
    const other = await seedWorkspace(db);
    const { row } = await ended({}, true, other);
    await db.updateTable('agents').set({ deleted_at: T0 }).where('id', '=', other.agentId).execute();
    assert.equal(await job.runDueOnce(), 1);
    assert.equal(fake.requests.length, 0);
    const after = await callOf(db, row.id);
    assert.deepEqual(
      [after.analysis_status, after.analysis_error, after.recording_status, after.post_call_attempts, ms(after.ended_event_at)],
      ['failed', 'the agent was deleted', 'ready', 1, T0.getTime()],
    );
  });
});

describe('the lease holder', () => {
  it('the one given, else a name of this process (host, pid, and a random part: another each time)', () => {
    assert.equal(rig.job({ holder: 'W9' }).holder, 'W9');
    const [first, second] = [rig.job({ holder: undefined }).holder, rig.job({ holder: undefined }).holder];
    assert.match(first, new RegExp(`^${os.hostname()}:${process.pid}:[0-9a-f]{8}$`));
    assert.notEqual(first, second);
  });
});

describe('a lease lost during the attempt', () => {
  it('the results are dropped: the row is not touched, the raw tracks are kept, no event', async () => {
    const { row } = await ended();
    hooks.beforeEncode = async () => {
      await db.updateTable('calls').set({ post_call_lease_holder: 'W2' }).where('id', '=', row.id).execute();
    };
    fake.reply({ content: JSON.stringify({ email: 'ann@example.com' }) });
    assert.equal(await job.runDueOnce(), 1);
    assert.equal(await rawBlocksLeft(blobs, ws.workspaceId, row.id, 2), 4, 'kept for the attempt that holds the lease');
    const after = await callOf(db, row.id);
    assert.deepEqual([after.recording_status, after.recording_key, after.analysis_status, after.ended_event_at, after.post_call_lease_holder], ['pending', null, 'pending', null, 'W2']);
    assert.deepEqual(await eventsOf(db, row.id), []);
  });

  it('renewed every third of the lease while the attempt runs: lease and due time now + leaseMs', async (t) => {
    // The renewal's interval on a mock: a third of the lease (100 ms) passes, and it is renewed.
    t.mock.timers.enable({ apis: ['setInterval'] });
    const quick = rig.job({ leaseMs: 300, holder: 'W3' });
    const { row } = await ended();
    fake.reply({ content: JSON.stringify({ email: null }) });
    hooks.beforeEncode = async () => {
      clock.advance(5000);
      t.mock.timers.tick(100);
      const renewed = T0.getTime() + 5300;
      // Bounded (30 s of polls): a renewal that never comes fails instead of hanging.
      for (let poll = 0; poll < 1500; poll++) {
        const now = await callOf(db, row.id);
        if (ms(now.post_call_lease_expires_at) === renewed && ms(now.post_call_due_at) === renewed) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('the lease was never renewed to now + leaseMs');
    };
    assert.equal(await quick.runDueOnce(), 1);
    assert.equal((await callOf(db, row.id)).recording_status, 'ready');
  });

  it('a stop waits for an attempt in flight at most the lease; the attempt still ends', async () => {
    const quick = rig.job({ leaseMs: 300, holder: 'W4' });
    const { row } = await ended();
    fake.reply({ content: JSON.stringify({ email: null }) });
    let release = () => {};
    const encoding = new Promise<void>((entered) => {
      hooks.beforeEncode = () => {
        entered();
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      };
    });
    await quick.start();
    await encoding;
    // Bounded: a stop that waits longer than the lease (as for 30 s) is still waiting at 10 s.
    let bound: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([quick.stop().then(() => 'stopped'), new Promise((resolve) => (bound = setTimeout(() => resolve('still waiting'), 10_000)))]);
    clearTimeout(bound);
    release();
    assert.equal(stopped, 'stopped');
    // Left to itself, the attempt still ends (its lease held on this clock): no work lost.
    for (let poll = 0; poll < 500 && (await callOf(db, row.id)).post_call_lease_holder !== null; poll++) await new Promise((resolve) => setTimeout(resolve, 20));
    const after = await callOf(db, row.id);
    assert.deepEqual([after.recording_status, after.post_call_lease_holder], ['ready', null]);
  });
});
