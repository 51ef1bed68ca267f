import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import alawmulaw from 'alawmulaw';
import { FRAME_SAMPLES, SAMPLE_RATE, splitFrames } from '../../platform/audio/frames.ts';
import { mulawToPcm16k } from '../../platform/audio/mulaw.ts';
import { createCallRecorder, mixInto } from './recorder.ts';
import { createResampler, resamplePcm16 } from '../../platform/audio/resample.ts';
import { spokenSentence } from './test-helpers.ts';
import { createVoiceActivityDetector } from './vad.ts';

// The runtime's audio parts on real audio: built-in synthesised speech, tones, silence.

const speech = await spokenSentence();

function tone(hz: number, rate: number, seconds: number): Int16Array {
  return Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate)));
}

const zeroCrossings = (pcm: Int16Array) => pcm.reduce((n, s, i) => n + (i > 0 && (pcm[i - 1] < 0) !== (s < 0) ? 1 : 0), 0);

describe('runtime audio', () => {
  it('the WebRTC VAD calls most speech frames speech and silent frames not', async () => {
    const vad = await createVoiceActivityDetector({ mode: 2 });
    const frames = splitFrames(speech);
    const voiced = frames.filter((f) => vad.isSpeech(f)).length;
    assert.ok(voiced / frames.length > 0.5, `${voiced} of ${frames.length} speech frames`);
    const silent = Array.from({ length: 50 }, () => new Int16Array(FRAME_SAMPLES));
    assert.equal(silent.filter((f) => vad.isSpeech(f)).length, 0);
    const hiss = Array.from({ length: 50 }, () => Int16Array.from({ length: FRAME_SAMPLES }, () => Math.round((Math.random() - 0.5) * 20)));
    assert.ok(hiss.filter((f) => vad.isSpeech(f)).length < 5);
    vad.close();
  });

  it('resampling keeps duration and pitch, one clip or a stream of chunks', async () => {
    const at8k = tone(440, 8000, 1);
    const up = await resamplePcm16(at8k, 8000, SAMPLE_RATE);
    assert.ok(Math.abs(up.length - SAMPLE_RATE) < 200, `${up.length} samples`);
    assert.ok(Math.abs(zeroCrossings(up) - 880) < 20, `${zeroCrossings(up)} zero crossings`);
    const stream = await createResampler(SAMPLE_RATE, 8000);
    const chunks = splitFrames(tone(440, SAMPLE_RATE, 1)).map((f) => stream.process(f));
    stream.close();
    const down = Int16Array.from(chunks.flatMap((c) => [...c]));
    assert.ok(Math.abs(down.length - 8000) < 400, `${down.length} samples`);
    assert.deepEqual(await resamplePcm16(at8k, 8000, 8000), at8k);
  });

  it('the recorder keeps a mu-law call as it came and decodes it to 16 kHz when taken: both sides, at once or block by block', () => {
    const recorder = createCallRecorder({ maxDurationMs: 30_000 });
    const caller = alawmulaw.mulaw.encode(tone(300, 8000, 12));
    const agent = alawmulaw.mulaw.encode(tone(500, 8000, 1));
    for (let f = 0; f * 160 < caller.length; f++) recorder.addCallerMulaw(f * 20, caller.subarray(f * 160, (f + 1) * 160));
    for (let f = 0; f * 160 < agent.length; f++) recorder.addAgentMulaw(2000 + f * 20, agent.subarray(f * 160, (f + 1) * 160));
    const pcm = recorder.pcm();
    assert.equal(pcm.length, 12 * SAMPLE_RATE);
    const heard = mulawToPcm16k(caller);
    assert.deepEqual(pcm.subarray(0, 2 * SAMPLE_RATE), heard.subarray(0, 2 * SAMPLE_RATE));
    assert.ok(Math.abs(zeroCrossings(pcm.subarray(0, SAMPLE_RATE)) - 600) < 10, 'the caller at its pitch');
    const both = heard.slice(2 * SAMPLE_RATE, 3 * SAMPLE_RATE);
    mixInto(both, mulawToPcm16k(agent));
    assert.deepEqual(pcm.subarray(2 * SAMPLE_RATE, 3 * SAMPLE_RATE), both, 'the agent mixed in at its offset');
    const blocks = [0, 1].map((index) => {
      const block = recorder.trackBlock('caller', index);
      mixInto(block, recorder.trackBlock('agent', index));
      return Array.from(block);
    });
    assert.deepEqual(Int16Array.from(blocks.flat()), pcm);
    recorder.release();
    assert.equal(recorder.pcm().length, 0);
  });

  it('the recorder mixes both sides at their offsets on one bounded track', () => {
    const recorder = createCallRecorder({ maxDurationMs: 2000 });
    const frame = new Int16Array(FRAME_SAMPLES).fill(1000);
    recorder.addCaller(1000, frame);
    recorder.addAgent(1000, frame);
    recorder.addAgent(1990, frame);
    recorder.addCaller(5000, frame);
    const pcm = recorder.pcm();
    assert.equal(pcm.length, 32000, 'nothing past the maximum duration');
    assert.equal(pcm[15999], 0);
    assert.equal(pcm[16000], 2000, 'both sides summed at 1 s');
    assert.equal(pcm[16000 + FRAME_SAMPLES], 0);
    assert.equal(pcm[31999], 1000);
    const loud = createCallRecorder({ maxDurationMs: 1000 });
    loud.addCaller(0, new Int16Array(FRAME_SAMPLES).fill(30000));
    loud.addAgent(0, new Int16Array(FRAME_SAMPLES).fill(30000));
    assert.equal(loud.pcm()[0], 32767, 'clipped, not wrapped');
    assert.equal(loud.durationMs(), 20);
    // Past the first 10 s block, where only the caller spoke: their audio as it was.
    const long = createCallRecorder({ maxDurationMs: 30_000 });
    long.addAgent(0, frame);
    long.addCaller(12_000, new Int16Array(FRAME_SAMPLES).fill(-1234));
    const track = long.pcm();
    assert.deepEqual([track.length, track[0], track[12 * 16_000 - 1], track[12 * 16_000], track.at(-1)], [12 * 16_000 + FRAME_SAMPLES, 1000, 0, -1234, -1234]);
  });

  it('the recorder keeps the agent frames of one buffer as one run, a later run over an earlier one, and reuses released blocks zeroed', () => {
    const speech = Int16Array.from({ length: FRAME_SAMPLES * 4 }, (_, i) => i);
    const recorder = createCallRecorder({ maxDurationMs: 60_000 });
    // Four consecutive frames of one synthesised sentence (views into its buffer), from 100 ms.
    for (let f = 0; f < 4; f++) recorder.addAgent(100 + f * 20, speech.subarray(f * FRAME_SAMPLES, (f + 1) * FRAME_SAMPLES));
    // A reply that starts over the last 40 ms (frames handed ahead, then dropped at a barge-in).
    recorder.addAgent(140, new Int16Array(FRAME_SAMPLES).fill(-7));
    recorder.addCaller(100, new Int16Array(FRAME_SAMPLES).fill(2));
    const pcm = recorder.pcm();
    const at = (ms: number) => (ms * 16_000) / 1000;
    assert.deepEqual([pcm[at(100) - 1], pcm[at(100)], pcm[at(100) + 5], pcm[at(120) + 1]], [0, 2, 7, FRAME_SAMPLES + 1]);
    assert.deepEqual([pcm[at(140)], pcm[at(160) - 1], pcm[at(160)], pcm.length], [-7, -7, 3 * FRAME_SAMPLES, at(180)]);
    recorder.release();
    assert.equal(recorder.pcm().length, 0, 'empty once released');
    // The next call's caller block comes from the pool: zeroed, not the last call's audio.
    const next = createCallRecorder({ maxDurationMs: 60_000 });
    next.addCaller(0, new Int16Array(FRAME_SAMPLES).fill(5));
    const track = next.pcm();
    assert.deepEqual([track.length, track[0], track.at(-1)], [FRAME_SAMPLES, 5, 5]);
    next.addCaller(200, new Int16Array(FRAME_SAMPLES).fill(5));
    assert.equal(next.pcm()[at(100)], 0, 'nothing left of the earlier call between the frames');
  });
});
