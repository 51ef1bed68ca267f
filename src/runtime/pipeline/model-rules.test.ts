import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FRAME_SAMPLES } from '../../platform/audio/frames.ts';
import { settle } from '../test-helpers.ts';
import { frames, modelRig } from './test-helpers.ts';

// A speech-to-speech call's caller and speech stages in the real call shell, the model's events fed
// by hand on a clock moved by hand (model-stages.test.ts runs them against the fake Realtime
// server): the barge-in after barge_in_min_ms of speech over the agent, the caller's entry and its
// span, the turn end taken once; the response's audio in whole frames, its entry and latency, a
// response cut (what was heard, told to the model), one that follows a played one, function calls
// holding the end.

describe("a speech-to-speech call's caller", () => {
  it('speech over the agent for barge_in_min_ms is a barge-in; speech that stops sooner is not', () => {
    const rig = modelRig();
    rig.setSpeaking(true);
    rig.caller.event({ type: 'speech_started', audioMs: 0 });
    assert.equal(rig.caller.active, true);
    rig.clock.advanceTo(5199);
    assert.deepEqual(rig.log.signals, []);
    rig.caller.event({ type: 'speech_stopped', audioMs: 199 });
    rig.clock.advanceTo(6000);
    assert.deepEqual(rig.log.signals, [], 'stopped before the minimum');
    rig.caller.event({ type: 'speech_started', audioMs: 1000 });
    rig.clock.advanceTo(6200);
    assert.deepEqual(rig.log.signals, [{ type: 'barge_in' }]);
  });

  it('no barge-in while the agent is silent, when it may not be interrupted, or while a message is left', () => {
    for (const [speaking, agent, leaving] of [
      [false, {}, false],
      [true, { interruptible: false }, false],
      [true, {}, true],
    ] as const) {
      const rig = modelRig(agent);
      rig.setSpeaking(speaking);
      if (leaving) rig.shell.leaveVoicemail();
      rig.caller.event({ type: 'speech_started', audioMs: 0 });
      rig.clock.advanceTo(7000);
      assert.deepEqual(
        rig.log.signals.filter((s) => s.type === 'barge_in'),
        [],
        JSON.stringify({ speaking, agent, leaving }),
      );
    }
  });

  it("a final transcript is the caller's entry from their start to the end of their speech; a partial or empty one is not", () => {
    const rig = modelRig();
    rig.caller.event({ type: 'speech_started', audioMs: 0 });
    rig.clock.advanceTo(5800);
    rig.caller.event({ type: 'speech_stopped', audioMs: 800 });
    rig.clock.advanceTo(6500);
    assert.equal(rig.caller.event({ type: 'user_transcript', itemId: 'i1', text: 'A table', final: false }), true);
    assert.deepEqual(rig.shell.transcript, []);
    rig.caller.event({ type: 'user_transcript', itemId: 'i1', text: 'A table for two.', final: true });
    assert.deepEqual(rig.shell.transcript, [{ role: 'user', text: 'A table for two.', start_ms: 0, end_ms: 800 }]);
    assert.deepEqual(rig.log.heard, ['A table for two.']);
    assert.equal(rig.caller.active, false);
    rig.caller.event({ type: 'user_transcript', itemId: 'i2', text: '', final: true });
    assert.equal(rig.shell.transcript.length, 1);
    // Words with no speech event around them: a point at the time they came.
    rig.clock.advanceTo(7000);
    rig.caller.event({ type: 'user_transcript', itemId: 'i3', text: 'Hello?', final: true });
    assert.deepEqual(rig.shell.transcript[1], { role: 'user', text: 'Hello?', start_ms: 2000, end_ms: 2000 });
  });

  it('the turn end is taken once; other events are not the caller’s', () => {
    const rig = modelRig();
    assert.equal(rig.caller.takeTurnEnd(), null);
    rig.caller.event({ type: 'speech_started', audioMs: 0 });
    rig.clock.advanceTo(5400);
    rig.caller.event({ type: 'speech_stopped', audioMs: 400 });
    assert.equal(rig.caller.takeTurnEnd(), 5400);
    assert.equal(rig.caller.takeTurnEnd(), null);
    assert.equal(rig.caller.event({ type: 'response_started', responseId: 'r1' }), false);
  });

  it('a final transcript within barge_in_min_ms ends the speech: no barge-in after it', () => {
    const rig = modelRig();
    rig.setSpeaking(true);
    rig.caller.event({ type: 'speech_started', audioMs: 0 });
    rig.clock.advanceTo(5100);
    rig.caller.event({ type: 'user_transcript', itemId: 'u1', text: 'ok', final: true });
    rig.clock.advanceTo(5400);
    assert.deepEqual(rig.log.signals, []);
  });

  it('the end cancels a barge-in pending', () => {
    const rig = modelRig();
    rig.setSpeaking(true);
    rig.caller.event({ type: 'speech_started', audioMs: 0 });
    rig.caller.end();
    rig.clock.advanceTo(6000);
    assert.deepEqual(rig.log.signals, []);
  });
});

describe("a speech-to-speech call's speech", () => {
  it('plays whole frames and carries the rest to the next delta; the entry spans the frames, with its latency, then a mark', async () => {
    const rig = modelRig();
    rig.speech.begin('r1', 4000);
    rig.speech.audio({ responseId: 'r1', itemId: 'item1' }, frames(2, 100));
    assert.equal(rig.log.sent, 1, 'the first of two whole frames written at once; the 100 samples carried');
    rig.speech.audio({ responseId: 'r2', itemId: 'other' }, frames(5));
    rig.speech.audio({ responseId: 'r1', itemId: 'item1' }, frames(1, FRAME_SAMPLES - 100));
    rig.speech.words('r1', ' We open at nine. ');
    rig.speech.words('r2', 'not ours');
    rig.speech.done({ type: 'response_done', responseId: 'r1', status: 'completed', outputTokens: 1, inputTokens: 1 });
    for (let t = 5020; t <= 5200; t += 20) {
      rig.clock.advanceTo(t);
      await settle();
    }
    assert.equal(rig.log.sent, 4, '2 + 1 + the carried 100 with the next 220');
    assert.deepEqual(rig.shell.transcript, [{ role: 'agent', text: 'We open at nine.', start_ms: 0, end_ms: 80, latency_ms: 1000 }]);
    assert.deepEqual(rig.log.marks, ['agent-turn-1']);
    assert.equal(rig.log.spoken, 1);
    assert.equal(rig.speech.current, null);
  });

  it('a carry left at the end is played, but not for a cancelled response; function calls or a failure hold the end', async () => {
    const rig = modelRig();
    rig.speech.begin('r1', null);
    rig.speech.audio({ responseId: 'r1', itemId: 'i' }, frames(0, 100));
    assert.equal(rig.log.sent, 0);
    rig.speech.done({ type: 'response_done', responseId: 'r1', status: 'completed', outputTokens: 1, inputTokens: 1 });
    assert.equal(rig.log.sent, 1, 'the short carry padded out as a frame');
    rig.speech.begin('r2', null);
    rig.speech.audio({ responseId: 'r2', itemId: 'i' }, frames(0, 100));
    rig.speech.done({ type: 'response_done', responseId: 'r2', status: 'cancelled', outputTokens: 1, inputTokens: 1 });
    assert.equal(rig.log.sent, 1);
    for (const status of ['failed', 'completed'] as const) {
      rig.speech.begin(`r-${status}`, null);
      if (status === 'completed') (rig.speech.current as { toolCalls: number }).toolCalls = 1;
      rig.speech.words(`r-${status}`, 'Let me check.');
      rig.speech.done({ type: 'response_done', responseId: `r-${status}`, status, outputTokens: 1, inputTokens: 1 });
      rig.clock.advanceTo(rig.clock.now() + 200);
      await settle();
      assert.equal(rig.log.spoken, 0, status);
    }
    rig.speech.done({ type: 'response_done', responseId: 'unknown', status: 'completed', outputTokens: 1, inputTokens: 1 });
  });

  it('a barge-in clears, tells the model how much of its item was heard, and keeps the words heard', async () => {
    const rig = modelRig();
    rig.speech.begin('r1', 4000);
    rig.speech.audio({ responseId: 'r1', itemId: 'item1' }, frames(10));
    rig.speech.words('r1', 'one two three four five six seven eight nine ten');
    rig.speech.done({ type: 'response_done', responseId: 'r1', status: 'completed', outputTokens: 1, inputTokens: 1 });
    for (let t = 5020; t <= 5080; t += 20) {
      rig.clock.advanceTo(t);
      await settle();
    }
    rig.speech.interrupted();
    assert.equal(rig.speech.current, null);
    assert.equal(rig.log.clears, 1);
    const [told] = rig.log.interrupts;
    assert.equal(told?.itemId, 'item1');
    const played = (told?.audioMs ?? 0) / 20;
    assert.ok(played > 0 && played < 10, `${played} frames heard`);
    const [entry] = rig.shell.transcript;
    assert.equal(entry.interrupted, true);
    assert.equal(entry.text, 'one two three four five six seven eight nine ten'.split(' ').slice(0, played).join(' '));
    assert.equal(entry.latency_ms, 1000);
    rig.speech.interrupted();
    assert.equal(rig.log.interrupts.length, 1, 'nothing to cut');
  });

  it('a response cut before its audio has an item tells the model nothing of it, and records nothing', () => {
    const rig = modelRig();
    rig.speech.begin('r1', 4000);
    rig.speech.words('r1', 'unheard');
    rig.speech.interrupted();
    assert.deepEqual(rig.log.interrupts, [undefined]);
    assert.deepEqual(rig.shell.transcript, []);
  });

  it('a new response after a generated one records it; one replacing a response still generated cuts it', async () => {
    const rig = modelRig();
    rig.speech.begin('r1', null);
    rig.speech.audio({ responseId: 'r1', itemId: 'i1' }, frames(1));
    rig.speech.words('r1', 'First.');
    rig.speech.done({ type: 'response_done', responseId: 'r1', status: 'completed', outputTokens: 1, inputTokens: 1 });
    await settle();
    rig.speech.begin('r2', null);
    assert.deepEqual(rig.shell.transcript.map((e) => [e.text, e.interrupted]), [['First.', undefined]]);
    assert.deepEqual(rig.log.interrupts, []);
    rig.speech.audio({ responseId: 'r2', itemId: 'i2' }, frames(3));
    rig.clock.advanceTo(rig.clock.now() + 40);
    await settle();
    rig.speech.begin('r3', null);
    assert.deepEqual(rig.log.interrupts, [{ itemId: 'i2', audioMs: 40 }], 'two of its three frames played');
    rig.speech.drop();
    assert.equal(rig.speech.current, null);
  });
});
