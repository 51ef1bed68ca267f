import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import pino from 'pino';
import { createFsBlobStore } from '../../platform/blobs/fs.ts';
import { FRAME_MS, FRAME_SAMPLES } from '../../platform/audio/frames.ts';
import { createCallRecorder } from '../../runtime/audio/recorder.ts';
import { createRawTrackWriter, deleteRawTracks, rawTrackKey, readMixedTracks } from './raw-tracks.ts';

// The raw tracks of a live call: completed 10 s blocks reach the BlobStore while the call goes
// on, the rest when it ends; mixed back they are exactly the recorder's own mix (clipping
// included); deleted, nothing is left.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-raw-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

it('writes completed blocks during the call, the rest at its end; mixed back they equal the recorder\'s mix', async () => {
  const blobs = createFsBlobStore(dir);
  const recorder = createCallRecorder({ maxDurationMs: 60_000 });
  const writer = createRawTrackWriter({ blobs, recorder, workspaceId: 'ws_raw', callId: 'call_raw', logger: pino({ level: 'silent' }) });
  // 25 s of a loud caller; the agent speaks loudly over part of it (the sum clips).
  const caller = new Int16Array(FRAME_SAMPLES).fill(30_000);
  const agentSpeech = new Int16Array(FRAME_SAMPLES * 100).fill(20_000);
  for (let at = 0; at < 25_000; at += FRAME_MS) recorder.addCaller(at, caller);
  for (let i = 0; i < 100; i++) recorder.addAgent(9_000 + i * FRAME_MS, agentSpeech.subarray(i * FRAME_SAMPLES, (i + 1) * FRAME_SAMPLES));
  // The first two blocks are complete (the caller is more than 2 s past their end): written while live.
  const second = rawTrackKey('ws_raw', 'call_raw', 'agent', 1);
  while (!(await blobs.stat(second))) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(await blobs.stat(rawTrackKey('ws_raw', 'call_raw', 'caller', 2)), null, 'the last block waits for the end');
  const samples = await writer.finish();
  assert.equal(samples, recorder.pcm().length);
  const mixed = await readMixedTracks(blobs, 'ws_raw', 'call_raw', samples);
  assert.deepEqual(mixed, recorder.pcm());
  assert.equal(Math.max(...mixed.subarray(9 * 16_000, 10 * 16_000)), 32_767);
  recorder.release();
  await deleteRawTracks(blobs, 'ws_raw', 'call_raw', samples);
  for (const track of ['caller', 'agent'] as const) {
    for (let index = 0; index < 3; index++) assert.equal(await blobs.stat(rawTrackKey('ws_raw', 'call_raw', track, index)), null);
  }
  await assert.rejects(readMixedTracks(blobs, 'ws_raw', 'call_raw', samples), /raw recording block caller-00000\.pcm is missing/);
});
