import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import alawmulaw from 'alawmulaw';
import { FRAME_SAMPLES, SAMPLE_RATE, splitFrames } from '../../platform/audio/frames.ts';
import { decodeMulawInto, mulawToPcm16k } from '../../platform/audio/mulaw.ts';
import { BLOCK_SAMPLES, createCallRecorder, mixInto } from './recorder.ts';
import { spokenSentence } from './test-helpers.ts';
import { createVoiceActivityDetector } from './vad.ts';

// The recorder's and the detector's rules on exact samples: the mix's clipping, the bounds of a
// call's timeline, frames across the 10 s blocks, the agent's runs, the μ-law side decoded block
// by block as a whole, a released recorder used again; the detector's modes and its close.

/** `n` distinct samples from `from` (a ramp that wraps below 30,000). */
const ramp = (n: number, from = 1) => Int16Array.from({ length: n }, (_, i) => ((from + i) % 30000) + 1);
const ms = (samples: number) => (samples * 1000) / SAMPLE_RATE;
/** A track's blocks, concatenated. */
function blocksOf(recorder: ReturnType<typeof createCallRecorder>, track: 'caller' | 'agent'): Int16Array {
  const end = recorder.samples().end;
  const parts = Array.from({ length: Math.ceil(end / BLOCK_SAMPLES) }, (_, i) => [...recorder.trackBlock(track, i)]);
  return Int16Array.from(parts.flat());
}

describe('the mix', () => {
  it('sums the two sides, clips at both ends, and stops at the shorter', () => {
    const out = Int16Array.from([100, 32000, -32000, 0, 32767, -32768, 9]);
    mixInto(out, Int16Array.from([23, 1000, -1000, -5, 0, 0]));
    assert.deepEqual([...out], [123, 32767, -32768, -5, 32767, -32768, 9]);
  });
});

describe('the timeline', () => {
  it('keeps nothing before the answer nor from the maximum duration on; a frame across it is cut', () => {
    const recorder = createCallRecorder({ maxDurationMs: 1000 });
    const frame = ramp(FRAME_SAMPLES);
    const mulaw = alawmulaw.mulaw.encode(ramp(FRAME_SAMPLES / 2, 500));
    recorder.addCaller(-20, frame);
    recorder.addAgent(-20, frame);
    recorder.addCallerMulaw(-20, mulaw);
    recorder.addAgentMulaw(-20, mulaw);
    recorder.addCaller(1000, frame);
    recorder.addAgent(1000, frame);
    recorder.addCallerMulaw(1000, mulaw);
    recorder.addAgentMulaw(1000, mulaw);
    assert.deepEqual(recorder.samples(), { end: 0, caller: 0 }, 'nothing outside 0..1000 ms');
    recorder.addCaller(990, frame);
    assert.deepEqual(recorder.samples(), { end: SAMPLE_RATE, caller: SAMPLE_RATE }, 'half the frame');
    assert.deepEqual([...recorder.pcm().subarray(SAMPLE_RATE - FRAME_SAMPLES / 2)], [...frame.subarray(0, FRAME_SAMPLES / 2)]);
  });

  it('cuts each side\'s frame across the maximum duration, PCM and μ-law, and takes an agent μ-law frame at 0', () => {
    const frame = ramp(FRAME_SAMPLES);
    const mulaw = alawmulaw.mulaw.encode(ramp(FRAME_SAMPLES / 2, 500));
    const cases = [
      ['agent', (r: ReturnType<typeof createCallRecorder>, at: number) => r.addAgent(at, frame)],
      ['caller μ-law', (r: ReturnType<typeof createCallRecorder>, at: number) => r.addCallerMulaw(at, mulaw)],
      ['agent μ-law', (r: ReturnType<typeof createCallRecorder>, at: number) => r.addAgentMulaw(at, mulaw)],
    ] as const;
    for (const [name, add] of cases) {
      const recorder = createCallRecorder({ maxDurationMs: 1000 });
      add(recorder, 0);
      add(recorder, 990);
      assert.equal(recorder.samples().end, SAMPLE_RATE, name);
      const whole = name === 'agent' ? frame : mulawToPcm16k(mulaw);
      const pcm = recorder.pcm();
      assert.deepEqual([...pcm.subarray(0, 8)], [...whole.subarray(0, 8)], `${name}: its frame at 0`);
      // The last half frame: the first half of the frame (μ-law decoded as a whole but for its last sample).
      assert.deepEqual([...pcm.subarray(SAMPLE_RATE - FRAME_SAMPLES / 2, SAMPLE_RATE - 2)], [...whole.subarray(0, FRAME_SAMPLES / 2 - 2)], name);
    }
  });
});

describe('the 10 s blocks', () => {
  it('a caller frame across a block boundary lands on both sides of it, PCM and μ-law alike', () => {
    const frame = ramp(FRAME_SAMPLES);
    const recorder = createCallRecorder({ maxDurationMs: 30_000 });
    recorder.addCaller(9990, frame);
    const at = BLOCK_SAMPLES - FRAME_SAMPLES / 2;
    assert.deepEqual([...recorder.pcm().subarray(at)], [...frame]);
    assert.deepEqual([...recorder.trackBlock('caller', 1)], [...frame.subarray(FRAME_SAMPLES / 2)]);
    const mulaw = alawmulaw.mulaw.encode(ramp(8000 * 12, 7));
    const heard = createCallRecorder({ maxDurationMs: 30_000 });
    for (let f = 0; f * 160 < mulaw.length; f++) heard.addCallerMulaw(f * 20, mulaw.subarray(f * 160, (f + 1) * 160));
    // As decoded whole, but for the last sample (the whole's has no byte after it; the recording's, silence).
    const whole = mulawToPcm16k(mulaw).subarray(0, -1);
    assert.deepEqual(heard.pcm().subarray(0, -1), whole, 'decoded block by block as a whole');
    assert.deepEqual(blocksOf(heard, 'caller').subarray(0, -1), whole);
  });

  it('an agent run across a block boundary, PCM and μ-law: each block its part', () => {
    const speech = ramp(SAMPLE_RATE * 2, 11);
    const mulaw = alawmulaw.mulaw.encode(ramp(8000 * 2, 13));
    for (const kind of ['pcm', 'mulaw'] as const) {
      const recorder = createCallRecorder({ maxDurationMs: 30_000 });
      // Frames of one buffer from 9 s to 11 s: one run.
      const whole = kind === 'pcm' ? speech : mulawToPcm16k(mulaw);
      for (let f = 0; f < 100; f++) {
        if (kind === 'pcm') recorder.addAgent(9000 + f * 20, speech.subarray(f * FRAME_SAMPLES, (f + 1) * FRAME_SAMPLES));
        else recorder.addAgentMulaw(9000 + f * 20, mulaw.subarray(f * 160, (f + 1) * 160));
      }
      const pcm = recorder.pcm();
      assert.deepEqual(pcm.subarray(9 * SAMPLE_RATE), whole, kind);
      assert.deepEqual(blocksOf(recorder, 'agent'), pcm, `${kind}: block by block`);
      assert.deepEqual(recorder.trackBlock('caller', 1), new Int16Array(SAMPLE_RATE), `${kind}: no caller in block 1: silence`);
    }
  });
});

describe('the agent\'s runs', () => {
  it('frames join a run only when of the same buffer, right after it in time and in the buffer', () => {
    const a = ramp(FRAME_SAMPLES * 3, 100);
    const b = ramp(FRAME_SAMPLES, 20000);
    const recorder = createCallRecorder({ maxDurationMs: 30_000 });
    recorder.addAgent(0, a.subarray(0, FRAME_SAMPLES));
    recorder.addAgent(20, b); // another buffer, right after
    recorder.addAgent(60, a.subarray(FRAME_SAMPLES, FRAME_SAMPLES * 2)); // a's next frame, after a gap
    recorder.addAgent(80, a.subarray(FRAME_SAMPLES * 2)); // right after in time, but a's frame after that one
    const pcm = recorder.pcm();
    const expected = new Int16Array(FRAME_SAMPLES * 5);
    expected.set(a.subarray(0, FRAME_SAMPLES), 0);
    expected.set(b, FRAME_SAMPLES);
    expected.set(a.subarray(FRAME_SAMPLES, FRAME_SAMPLES * 3), FRAME_SAMPLES * 3);
    assert.deepEqual(pcm, expected);
    const skipping = createCallRecorder({ maxDurationMs: 30_000 });
    skipping.addAgent(0, a.subarray(0, FRAME_SAMPLES));
    skipping.addAgent(20, a.subarray(FRAME_SAMPLES * 2)); // right after in time, a frame of the buffer skipped
    assert.deepEqual([...skipping.pcm().subarray(FRAME_SAMPLES, FRAME_SAMPLES + 4)], [...a.subarray(FRAME_SAMPLES * 2, FRAME_SAMPLES * 2 + 4)]);
    const mixed = createCallRecorder({ maxDurationMs: 30_000 });
    const bytes = alawmulaw.mulaw.encode(ramp(FRAME_SAMPLES, 300));
    const pcmView = new Int16Array(bytes.buffer, 0, FRAME_SAMPLES / 4);
    mixed.addAgent(0, pcmView);
    mixed.addAgentMulaw(ms(FRAME_SAMPLES / 4), bytes.subarray(FRAME_SAMPLES / 2));
    const decoded = new Int16Array(FRAME_SAMPLES);
    decodeMulawInto(bytes.subarray(FRAME_SAMPLES / 2), decoded);
    assert.deepEqual([...mixed.pcm().subarray(FRAME_SAMPLES / 4, FRAME_SAMPLES / 4 + 6)], [...decoded.subarray(0, 6)], 'μ-law after PCM of one buffer: a run of its own');
  });
});

describe('both caller formats in one block', () => {
  it('are summed', () => {
    const recorder = createCallRecorder({ maxDurationMs: 30_000 });
    recorder.addCaller(0, new Int16Array(FRAME_SAMPLES).fill(100));
    const mulaw = alawmulaw.mulaw.encode(new Int16Array(FRAME_SAMPLES / 2).fill(1000));
    recorder.addCallerMulaw(0, mulaw);
    assert.equal(recorder.pcm()[4], 100 + mulawToPcm16k(mulaw)[4]);
  });
});

describe('a released recorder', () => {
  it('records anew from empty, both sides and both formats', () => {
    const recorder = createCallRecorder({ maxDurationMs: 30_000 });
    recorder.addCaller(0, ramp(FRAME_SAMPLES));
    recorder.addCallerMulaw(0, alawmulaw.mulaw.encode(ramp(FRAME_SAMPLES / 2)));
    recorder.addAgent(0, ramp(FRAME_SAMPLES));
    recorder.release();
    assert.deepEqual(recorder.samples(), { end: 0, caller: 0 });
    const frame = ramp(FRAME_SAMPLES, 900);
    recorder.addCaller(20, frame);
    recorder.addAgent(40, frame);
    const mulaw = alawmulaw.mulaw.encode(ramp(FRAME_SAMPLES / 2, 50));
    recorder.addCallerMulaw(60, mulaw);
    const fresh = createCallRecorder({ maxDurationMs: 30_000 });
    fresh.addCaller(20, frame);
    fresh.addAgent(40, frame);
    fresh.addCallerMulaw(60, mulaw);
    const pcm = recorder.pcm();
    assert.deepEqual(pcm, fresh.pcm(), 'as a new recorder records');
    assert.deepEqual([pcm.length, pcm[FRAME_SAMPLES - 1], pcm[FRAME_SAMPLES], pcm[FRAME_SAMPLES * 2]], [FRAME_SAMPLES * 4, 0, frame[0], frame[0]]);
  });
});

const speech = splitFrames(await spokenSentence());

describe('the voice activity detector', () => {
  const verdicts = async (frames: Int16Array[], options?: { mode?: 0 | 1 | 2 | 3 }) => {
    const vad = await createVoiceActivityDetector(options);
    const out = frames.map((frame) => vad.isSpeech(frame));
    vad.close();
    return out;
  };

  it('mode 2 by default; a higher mode calls fewer frames speech', async () => {
    const byMode = await Promise.all(([0, 1, 2, 3] as const).map((mode) => verdicts(speech, { mode })));
    assert.deepEqual(await verdicts(speech), byMode[2], 'the default is mode 2');
    const counts = byMode.map((v) => v.filter(Boolean).length);
    assert.ok(counts[1] > counts[2] && counts[2] > counts[3], `speech frames by mode ${counts}`);
  });

  it('a longer frame is judged by its first 20 ms; closed, it hears nothing, and closes once', async () => {
    const vad = await createVoiceActivityDetector({ mode: 2 });
    const voiced = speech.findIndex((frame) => vad.isSpeech(frame));
    assert.ok(voiced >= 0);
    const longer = new Int16Array(FRAME_SAMPLES * 2);
    longer.set(speech[voiced]);
    assert.equal(vad.isSpeech(longer), true);
    vad.close();
    assert.equal(vad.isSpeech(speech[voiced]), false);
    vad.close();
    const next = await createVoiceActivityDetector({ mode: 2 });
    assert.equal(next.isSpeech(speech[voiced]), true, 'a detector made after works');
    next.close();
  });
});
