import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, describe, it, mock } from 'node:test';
import pino from 'pino';
import { FRAME_MS, FRAME_SAMPLES } from '../../platform/audio/frames.ts';
import { createFsBlobStore } from '../../platform/blobs/fs.ts';
import type { BlobStore } from '../../ports/blobs.ts';
import { BLOCK_SAMPLES, createCallRecorder } from '../../runtime/audio/recorder.ts';
import { createRawTrackWriter, deleteRawBlock, deleteRawTracks, RawTracksMissingError, rawTrackKey, readMixedTracks, savedRawSamples } from './raw-tracks.ts';

// The raw tracks (raw-tracks.ts) on a real fs BlobStore: their keys; the live writer driven by
// node:test's mock timers (its flush is a one-second interval), each block written once the
// caller is 2 s past its end, the rest by finish(), a failed write thrown by finish() without
// stopping the others; the mix read back exactly (clipping both ways, short and odd blocks); the
// missing block named; the blocks a dead process saved; deletions of exactly the blocks named.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-raw-rules-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const store = createFsBlobStore(dir);
const logger = pino({ level: 'silent' });
let seq = 0;
const callId = () => `call_rules_${++seq}`;
const WS = 'ws_raw_rules';

afterEach(() => mock.timers.reset());

const bytesOf = (pcm: Int16Array) => Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);

/** The fs store, recording each put as it is called; a put of a key in `failing` rejects. */
function recordingStore(failing = new Set<string>()) {
  const puts: Array<[string, string]> = [];
  let inFlight = 0;
  const blobs: BlobStore = {
    ...store,
    kind: store.kind,
    async put(key, bytes, contentType) {
      puts.push([key.split('/').at(-1) ?? key, contentType]);
      inFlight++;
      try {
        if (failing.has(key)) throw new Error(`cannot write ${key}`);
        await store.put(key, bytes, contentType);
      } finally {
        inFlight--;
      }
    },
  };
  /** Waits until the writer's chain has nothing left to put. */
  async function idle() {
    for (let quiet = 0; quiet < 5; ) {
      await new Promise((resolve) => setImmediate(resolve));
      quiet = inFlight === 0 ? quiet + 1 : 0;
    }
  }
  return { blobs, puts, idle };
}

function caller(recorder: ReturnType<typeof createCallRecorder>, fromMs: number, toMs: number, value = 1000) {
  for (let at = fromMs; at < toMs; at += FRAME_MS) recorder.addCaller(at, new Int16Array(FRAME_SAMPLES).fill(value));
}

it('keys: recordings/raw/<workspace>/<call>/<track>-<index, 5 digits>.pcm', () => {
  assert.equal(rawTrackKey('ws_1', 'call_1', 'caller', 7), 'recordings/raw/ws_1/call_1/caller-00007.pcm');
  assert.equal(rawTrackKey('ws_1', 'call_1', 'agent', 123_456), 'recordings/raw/ws_1/call_1/agent-123456.pcm');
});

describe('the live writer', () => {
  it('a block goes once the caller is 2 s past its end, both tracks, once; finish() writes the rest and answers the samples', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    const { blobs, puts, idle } = recordingStore();
    const recorder = createCallRecorder({ maxDurationMs: 60_000 });
    const id = callId();
    const writer = createRawTrackWriter({ blobs, recorder, workspaceId: WS, callId: id, logger });
    caller(recorder, 0, 12_000 - FRAME_MS);
    recorder.addAgent(3000, new Int16Array(FRAME_SAMPLES).fill(500));
    mock.timers.tick(1000);
    await idle();
    assert.equal(puts.length, 0, 'the caller is not yet 2 s past the first block');
    caller(recorder, 12_000 - FRAME_MS, 12_000);
    mock.timers.tick(999);
    await idle();
    assert.equal(puts.length, 0, 'the flush runs every second');
    mock.timers.tick(1);
    await idle();
    assert.deepEqual(puts, [['caller-00000.pcm', 'application/octet-stream'], ['agent-00000.pcm', 'application/octet-stream']]);
    mock.timers.tick(1000);
    await idle();
    assert.equal(puts.length, 2, 'a block is written once');
    caller(recorder, 12_000, 25_000);
    const samples = await writer.finish();
    assert.equal(samples, recorder.samples().end);
    assert.equal(samples, 25 * 16_000);
    assert.deepEqual(puts.map(([key]) => key).slice(2), ['caller-00001.pcm', 'agent-00001.pcm', 'caller-00002.pcm', 'agent-00002.pcm']);
    // Compared as bytes: a failing deepEqual of 400,000 samples would take minutes to print its diff.
    assert.ok(bytesOf(await readMixedTracks(store, WS, id, samples)).equals(bytesOf(recorder.pcm())), 'the mix read back is the recorder\'s');
    const agentBlock = await store.get(rawTrackKey(WS, id, 'agent', 0));
    assert.deepEqual(new Int16Array(new Uint8Array(agentBlock?.bytes ?? []).buffer).subarray(48_000, 48_000 + FRAME_SAMPLES), new Int16Array(FRAME_SAMPLES).fill(500));
    caller(recorder, 25_000, 40_000);
    mock.timers.tick(5000);
    await idle();
    assert.equal(puts.length, 6, 'no flush after finish()');
    recorder.release();
  });

  it('stop() ends the flushes without writing', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    const { blobs, puts, idle } = recordingStore();
    const recorder = createCallRecorder({ maxDurationMs: 60_000 });
    const writer = createRawTrackWriter({ blobs, recorder, workspaceId: WS, callId: callId(), logger });
    caller(recorder, 0, 30_000);
    writer.stop();
    mock.timers.tick(3000);
    await idle();
    assert.equal(puts.length, 0);
    recorder.release();
  });

  it('a block that cannot be written: the others still are, finish() throws the first failure', async () => {
    const id = callId();
    const { blobs, puts } = recordingStore(new Set([rawTrackKey(WS, id, 'agent', 0), rawTrackKey(WS, id, 'caller', 1)]));
    const recorder = createCallRecorder({ maxDurationMs: 60_000 });
    const writer = createRawTrackWriter({ blobs, recorder, workspaceId: WS, callId: id, logger });
    caller(recorder, 0, 25_000);
    await assert.rejects(writer.finish(), { message: `cannot write ${rawTrackKey(WS, id, 'agent', 0)}` });
    assert.equal(puts.length, 6);
    assert.ok(await store.stat(rawTrackKey(WS, id, 'caller', 2)));
    recorder.release();
  });

  it('nothing recorded: finish() answers 0 and writes nothing', async () => {
    const { blobs, puts } = recordingStore();
    const recorder = createCallRecorder({ maxDurationMs: 60_000 });
    assert.equal(await createRawTrackWriter({ blobs, recorder, workspaceId: WS, callId: callId(), logger }).finish(), 0);
    assert.equal(puts.length, 0);
    recorder.release();
  });
});

/** Stores raw bytes as a block of the call. */
const putBlock = (id: string, track: 'caller' | 'agent', index: number, pcm: Int16Array | Buffer) =>
  store.put(rawTrackKey(WS, id, track, index), Buffer.isBuffer(pcm) ? pcm : Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), 'application/octet-stream');

describe('readMixedTracks', () => {
  it('`samples` long: caller and agent summed, clipped both ways; a short agent block, an odd byte dropped, a longer last block cut', async () => {
    const id = callId();
    const samples = BLOCK_SAMPLES + 3;
    const c0 = new Int16Array(BLOCK_SAMPLES).fill(-20_000);
    c0[0] = 20_000;
    c0[1] = 100;
    const a0 = new Int16Array(4).fill(-20_000);
    a0[0] = 20_000;
    a0[1] = 7;
    await putBlock(id, 'caller', 0, c0);
    await putBlock(id, 'agent', 0, a0);
    // The last caller block is longer than the samples asked, the agent's holds an odd byte.
    await putBlock(id, 'caller', 1, Int16Array.from([1, 2, 3, 4, 5]));
    const agentBytes = Buffer.alloc(7);
    for (const [i, v] of [10, 20, 30].entries()) agentBytes.writeInt16LE(v, i * 2);
    agentBytes[6] = 0x7f;
    await putBlock(id, 'agent', 1, agentBytes);
    const mixed = await readMixedTracks(store, WS, id, samples);
    assert.equal(mixed.length, samples);
    assert.deepEqual(Array.from(mixed.subarray(0, 5)), [32_767, 107, -32_768, -32_768, -20_000]);
    assert.equal(mixed[BLOCK_SAMPLES - 1], -20_000);
    assert.deepEqual(Array.from(mixed.subarray(BLOCK_SAMPLES)), [11, 22, 33]);
  });

  it('no samples: empty, nothing read', async () => {
    assert.deepEqual(await readMixedTracks(store, WS, callId(), 0), new Int16Array(0));
  });

  it('a missing block of either track: RawTracksMissingError naming it', async () => {
    const id = callId();
    await putBlock(id, 'caller', 0, new Int16Array(BLOCK_SAMPLES));
    await putBlock(id, 'agent', 0, new Int16Array(BLOCK_SAMPLES));
    await putBlock(id, 'caller', 1, new Int16Array(10));
    const err = await readMixedTracks(store, WS, id, BLOCK_SAMPLES + 10).catch((e: unknown) => e);
    assert.ok(err instanceof RawTracksMissingError);
    assert.deepEqual([err.name, err.message], ['RawTracksMissingError', 'the raw recording block agent-00001.pcm is missing']);
    assert.equal((await readMixedTracks(store, WS, id, BLOCK_SAMPLES)).length, BLOCK_SAMPLES, 'only the blocks of `samples` are read');
  });

  it('both tracks missing: the caller\'s block named, whichever read ends first', async () => {
    const id = callId();
    // The caller's read answers last: the error is still the caller's (the tracks' order).
    const slowCaller: BlobStore = {
      ...store,
      get: async (key) => {
        if (key.includes('/caller-')) await new Promise((resolve) => setTimeout(resolve, 30));
        return store.get(key);
      },
    };
    const err = await readMixedTracks(slowCaller, WS, id, BLOCK_SAMPLES).catch((e: unknown) => e);
    assert.ok(err instanceof RawTracksMissingError);
    assert.equal(err.message, 'the raw recording block caller-00000.pcm is missing');
  });
});

describe('saved blocks and deletions', () => {
  it('savedRawSamples: the complete blocks (both tracks) from the first', async () => {
    const id = callId();
    assert.equal(await savedRawSamples(store, WS, id), 0);
    for (const index of [0, 1]) for (const track of ['caller', 'agent'] as const) await putBlock(id, track, index, new Int16Array(4));
    await putBlock(id, 'caller', 2, new Int16Array(4));
    await putBlock(id, 'agent', 3, new Int16Array(4));
    assert.equal(await savedRawSamples(store, WS, id), 2 * BLOCK_SAMPLES);
    const agentOnly = callId();
    await putBlock(agentOnly, 'agent', 0, new Int16Array(4));
    assert.equal(await savedRawSamples(store, WS, agentOnly), 0);
  });

  it('deleteRawBlock: both tracks of that block only; deleteRawTracks: the blocks of `samples`, none after', async () => {
    const id = callId();
    for (const index of [0, 1, 2, 3]) for (const track of ['caller', 'agent'] as const) await putBlock(id, track, index, new Int16Array(4));
    await deleteRawBlock(store, WS, id, 3);
    const left = async () => {
      const out: string[] = [];
      for (const index of [0, 1, 2, 3]) for (const track of ['caller', 'agent'] as const) if (await store.stat(rawTrackKey(WS, id, track, index))) out.push(`${track}-${index}`);
      return out;
    };
    assert.deepEqual(await left(), ['caller-0', 'agent-0', 'caller-1', 'agent-1', 'caller-2', 'agent-2']);
    await deleteRawTracks(store, WS, id, BLOCK_SAMPLES + 1);
    assert.deepEqual(await left(), ['caller-2', 'agent-2']);
    await deleteRawTracks(store, WS, id, 3 * BLOCK_SAMPLES);
    assert.deepEqual(await left(), []);
    await deleteRawTracks(store, WS, id, 3 * BLOCK_SAMPLES);
  });
});
