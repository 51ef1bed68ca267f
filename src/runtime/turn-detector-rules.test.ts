import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FRAME_SAMPLES } from '../platform/audio/frames.ts';
import { createTurnDetector, type TurnDetectorDeps, type Utterance } from './turn-detector.ts';

// The turn detector's rules frame by frame (a frame is speech when its first sample is not zero):
// the shortest speech that counts, at its bound exactly; an utterance's end time; the bound on one
// utterance; the pause before the turn's end and its resume; a single-frame utterance's audio a copy.

const speech = (n = 1) => Int16Array.from({ length: FRAME_SAMPLES }, (_, i) => (i === 0 ? n : 0));
const silence = () => new Int16Array(FRAME_SAMPLES);

function detector(options: Partial<TurnDetectorDeps> = {}) {
  const utterances: Utterance[] = [];
  const log: string[] = [];
  const turns = createTurnDetector({
    isSpeech: (frame) => frame[0] !== 0,
    turnEndSilenceMs: 100,
    onSpeechStart: (at) => log.push(`start ${at}`),
    onSpeech: () => {},
    onUtterance: (u) => utterances.push(u),
    ...options,
  });
  let at = 0;
  /** Feeds frames from the given pattern: s = speech, _ = silence, one per 20 ms. */
  const feed = (pattern: string) => {
    for (const c of pattern) {
      turns.feed(c === 's' ? speech() : silence(), at);
      at += 20;
    }
  };
  return { turns, utterances, log, feed };
}

describe('turn detection', () => {
  it('counts speech of exactly the minimum, not less; the utterance ends after its last speech frame', () => {
    const five = detector({ minSpeechMs: 100 });
    five.feed('__sssss_____');
    assert.deepEqual(
      five.utterances.map((u) => [u.startMs, u.endMs, u.audio.length / FRAME_SAMPLES]),
      [[40, 140, 10]],
    );
    const four = detector({ minSpeechMs: 100 });
    four.feed('ssss_____');
    assert.deepEqual(four.utterances, []);
  });

  it('is collecting while speech has started and until the turn ends', () => {
    const { turns, feed } = detector();
    assert.equal(turns.speaking, false);
    feed('_');
    assert.equal(turns.speaking, false, 'silence starts nothing');
    feed('ss__');
    assert.equal(turns.speaking, true);
    feed('___');
    assert.equal(turns.speaking, false);
  });

  it('cuts speech longer than its bound (30 s by default) into utterances of that length', () => {
    const bounded = detector({ maxUtteranceMs: 100 });
    bounded.feed('ssssssss');
    assert.deepEqual(
      bounded.utterances.map((u) => [u.startMs, u.audio.length / FRAME_SAMPLES]),
      [[0, 5]],
    );
    const plain = detector();
    plain.feed('s'.repeat(1499));
    assert.equal(plain.utterances.length, 0);
    plain.feed('s');
    assert.deepEqual(
      plain.utterances.map((u) => u.audio.length / FRAME_SAMPLES),
      [1500],
    );
  });

  it("a single frame's utterance is a copy of it", () => {
    const frames: Int16Array[] = [];
    const turns = createTurnDetector({
      isSpeech: () => true,
      turnEndSilenceMs: 100,
      minSpeechMs: 20,
      maxUtteranceMs: 20,
      onSpeechStart: () => {},
      onSpeech: () => {},
      onUtterance: (u) => frames.push(u.audio),
    });
    const frame = speech(7);
    turns.feed(frame, 0);
    frame[0] = 99;
    assert.equal(frames[0][0], 7);
  });

  it('pauses after the pause silence once the minimum was spoken (exactly), resumes on speech, and starts each turn unpaused', () => {
    const events: string[] = [];
    const pause = { pauseMs: 40, onPause: (audio: Int16Array) => events.push(`pause ${audio.length / FRAME_SAMPLES}`), onResume: () => events.push('resume') };
    const { feed } = detector({ minSpeechMs: 60, pause });
    feed('sss__');
    assert.deepEqual(events, ['pause 5'], 'three frames are the 60 ms minimum');
    feed('s');
    assert.deepEqual(events, ['pause 5', 'resume']);
    feed('__');
    feed('___');
    assert.deepEqual(events, ['pause 5', 'resume', 'pause 8'], 'paused again, then the turn ended');
    feed('s');
    assert.deepEqual(events, ['pause 5', 'resume', 'pause 8'], 'a new turn is not a resume');
    const short = detector({ minSpeechMs: 60, pause: { ...pause, onPause: () => events.push('short') } });
    short.feed('ss__');
    assert.equal(events.includes('short'), false, 'less than the minimum: no pause');
  });
});
