import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settle, stepTo } from '../test-helpers.ts';
import { done, frames, modelRig } from './test-helpers.ts';

// A speech-to-speech call's speech stage at its edges, the model's events fed by hand on a clock
// moved by hand (model-rules.test.ts holds the main paths): audio carried across deltas sample for
// sample, a latency only for an answer whose first frame went out, no entry without words, a cut
// before the response is generated, the response a `done` names, an incomplete response, a
// cancelled one's carry, a reply over the speaker's bound.

describe("a speech-to-speech call's speech, at its edges", () => {
  it('the audio short of a frame goes out first in the next frame, before the next delta', async () => {
    const rig = modelRig();
    rig.speech.begin('r1', null);
    const first = new Int16Array(320 + 100);
    first.fill(1, 0, 320);
    first.fill(2, 320);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, first);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(1, 220, 3));
    rig.speech.done(done('r1'));
    await stepTo(rig.clock, 5100);
    assert.deepEqual(rig.log.frames, ['1', '2+3', '3']);
  });

  it('μ-law: the bytes short of a frame go out first in the next frame; the last, padded with μ-law silence', async () => {
    const rig = modelRig({}, { mulaw: true });
    rig.speech.begin('r1', null);
    const first = new Uint8Array(160 + 60);
    first.fill(1, 0, 160);
    first.fill(2, 160);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, first);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, new Uint8Array(160).fill(3));
    rig.speech.done(done('r1'));
    await stepTo(rig.clock, 5100);
    assert.deepEqual(rig.log.frames, ['mulaw:1', 'mulaw:2+3', 'mulaw:3+255']);
  });

  it('a greeting (no turn ended) has no latency; an answer whose audio never went out has none either', async () => {
    const greeting = modelRig();
    greeting.speech.begin('r1', null);
    greeting.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(2));
    greeting.speech.words('r1', 'Welcome to the bistro.');
    greeting.speech.done(done('r1'));
    await stepTo(greeting.clock, 5100);
    assert.deepEqual(greeting.shell.transcript, [{ role: 'agent', text: 'Welcome to the bistro.', start_ms: 0, end_ms: 40 }]);

    const silent = modelRig();
    silent.speech.begin('r1', 4000);
    silent.speech.words('r1', 'Words without audio.');
    silent.speech.done(done('r1'));
    await stepTo(silent.clock, 5100);
    assert.deepEqual(silent.shell.transcript, [{ role: 'agent', text: 'Words without audio.', start_ms: 0, end_ms: 0 }]);
  });

  it('the latency is to the first frame written, not to a later delta', async () => {
    const rig = modelRig();
    rig.speech.begin('r1', 4900);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(2));
    await stepTo(rig.clock, 5060);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(2));
    rig.speech.words('r1', 'Four frames.');
    rig.speech.done(done('r1'));
    await stepTo(rig.clock, 5200);
    assert.equal(rig.shell.transcript[0].latency_ms, 100);
  });

  it('a response with audio but no words writes no entry and no mark, but still completes', async () => {
    const rig = modelRig();
    rig.speech.begin('r1', 4000);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(2));
    rig.speech.words('r1', '   ');
    rig.speech.done(done('r1'));
    await stepTo(rig.clock, 5100);
    assert.deepEqual(rig.shell.transcript, []);
    assert.deepEqual(rig.log.marks, []);
    assert.equal(rig.log.spoken, 1);
  });

  it('cut while still generating, with all its audio so far played: the words heard are a share short of all', async () => {
    const rig = modelRig();
    rig.speech.begin('r1', 4000);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(3));
    rig.speech.words('r1', 'one two three four five six seven eight');
    await stepTo(rig.clock, 5100);
    assert.equal(rig.log.sent, 3);
    rig.speech.interrupted();
    assert.deepEqual(rig.log.interrupts, [{ itemId: 'i1', audioMs: 60 }]);
    assert.equal(rig.shell.transcript[0].text, 'one two three four five six', 'three frames of four: the reply goes on past its audio so far');
  });

  it('cut with frames played but no words yet: no entry; cut in the very beat its first frame went out: no entry either', async () => {
    const wordless = modelRig();
    wordless.speech.begin('r1', 4000);
    wordless.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(5));
    await stepTo(wordless.clock, 5040);
    wordless.speech.interrupted();
    assert.deepEqual(wordless.shell.transcript, []);

    // The frame is written on the clock's beat; the cut comes in that same beat, before the
    // first frame's time is known: what was heard has no start, so it is not written.
    const sameBeat = modelRig();
    sameBeat.speech.begin('r1', 4000);
    sameBeat.speech.words('r1', 'one two');
    sameBeat.clock.advanceTo(5010);
    sameBeat.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(2));
    sameBeat.speech.done(done('r1'));
    sameBeat.clock.advanceTo(5030);
    sameBeat.speech.interrupted();
    assert.deepEqual(sameBeat.shell.transcript, []);
    assert.equal(sameBeat.log.sent, 2);
  });

  it("a done naming another response leaves the one speaking going: it is neither finished nor completed", async () => {
    const rig = modelRig();
    rig.speech.begin('r1', 4000);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(1, 100));
    rig.speech.words('r1', 'Still talking.');
    rig.speech.done(done('r0'));
    await stepTo(rig.clock, 5200);
    assert.equal(rig.log.sent, 1, 'its carry is not played');
    assert.equal(rig.log.spoken, 0);
    assert.deepEqual(rig.shell.transcript, []);
    assert.equal(rig.speech.current?.id, 'r1');
    assert.equal(rig.speech.current?.generated, false);
  });

  it('an incomplete response (cut by its token limit) is spoken and completes like a completed one', async () => {
    const rig = modelRig();
    rig.speech.begin('r1', 4000);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(1));
    rig.speech.words('r1', 'We open at');
    rig.speech.done(done('r1', 'incomplete'));
    await stepTo(rig.clock, 5100);
    assert.equal(rig.log.spoken, 1);
    assert.equal(rig.shell.transcript[0].text, 'We open at');
  });

  it("a cancelled response's carry is never played", async () => {
    const rig = modelRig();
    rig.speech.begin('r1', 4000);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(0, 100));
    rig.speech.done(done('r1', 'cancelled'));
    await stepTo(rig.clock, 5200);
    assert.equal(rig.log.sent, 0);
    assert.equal(rig.log.spoken, 0);
  });

  it('a reply over the speaker’s bound (five minutes queued) fails the call as a media error', async () => {
    const rig = modelRig();
    rig.speech.begin('r1', 4000);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(15_001));
    await settle();
    const outcome = await rig.outcome;
    assert.deepEqual([outcome.status, outcome.endReason, outcome.error], ['failed', 'media_error', { code: 'media_error', message: 'the agent reply exceeded the audio bound' }]);
    assert.equal(rig.log.sent, 0);
  });
});
