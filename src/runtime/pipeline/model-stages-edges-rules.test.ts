import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FRAME_SAMPLES } from '../../platform/audio/frames.ts';
import { settle } from '../test-helpers.ts';
import { done, playOut, respond, stagesRig } from './test-helpers.ts';

// The speech-to-speech stages' turn rules on the real call shell, the model stubbed
// (model-stages-rules.test.ts holds the session, audio and tools): a barge-in only over a response,
// the silence prompt and a response playing when it would come, a goodbye heard before the
// answer's audio, what comes before the session opens, the end reason of a closed session.

describe('speech-to-speech stages: turns', () => {
  it('speech over a response for barge_in_min_ms cuts it; the same speech with no response is no barge-in', async () => {
    const rig = stagesRig({ agent: { barge_in_min_ms: 200 } });
    await settle();
    rig.emit({ type: 'response_started', responseId: 'r1' });
    rig.emit({ type: 'audio', responseId: 'r1', itemId: 'i1', pcm: new Int16Array(FRAME_SAMPLES * 50).fill(200) });
    rig.emit({ type: 'speech_started', audioMs: 0 });
    await playOut(rig, 300);
    assert.equal(rig.log.interrupts.length, 1, 'the response was cut');

    const quiet = stagesRig({ agent: { barge_in_min_ms: 200 } });
    await settle();
    quiet.emit({ type: 'speech_started', audioMs: 0 });
    await playOut(quiet, 300);
    assert.deepEqual(quiet.log.interrupts, []);
  });

  it('silence after the agent spoke asks "still there?"; a response still playing when the timer fires is no silence', async () => {
    const rig = stagesRig({ agent: { silence_timeout_seconds: 2 } });
    await settle();
    respond(rig, 'r1', 'Hello.');
    rig.emit(done('r1'));
    await playOut(rig, 2100);
    assert.deepEqual(rig.log.asked.slice(1), ['Say exactly this and nothing else: "Are you still there?"']);

    const playing = stagesRig({ agent: { silence_timeout_seconds: 2 } });
    await settle();
    respond(playing, 'r1', 'Hello.');
    playing.emit(done('r1'));
    await playOut(playing, 200);
    // A response the model starts on its own, longer than the silence timeout.
    playing.emit({ type: 'response_started', responseId: 'r2' });
    playing.emit({ type: 'audio', responseId: 'r2', itemId: 'i2', pcm: new Int16Array(FRAME_SAMPLES * 150).fill(200) });
    await playOut(playing, 2500);
    assert.deepEqual(playing.log.asked.slice(1), [], 'the agent was talking');
  });

  it('a goodbye heard after a response started but before its audio waits for the audio to play', async () => {
    const rig = stagesRig();
    await settle();
    rig.emit({ type: 'response_started', responseId: 'r1' });
    rig.emit({ type: 'user_transcript', itemId: 'u1', text: 'goodbye', final: true });
    await settle();
    assert.equal(rig.pipeline.ended, false, 'the answer has not been said yet');
    rig.emit({ type: 'audio', responseId: 'r1', itemId: 'i1', pcm: new Int16Array(FRAME_SAMPLES * 3).fill(200) });
    rig.emit({ type: 'agent_transcript', responseId: 'r1', itemId: 'i1', text: 'Goodbye!', final: true });
    rig.emit(done('r1'));
    await playOut(rig, 200);
    const ended = await rig.outcome;
    assert.equal(ended.endReason, 'caller_goodbye');
    assert.equal(ended.transcript.at(-1)?.text, 'Goodbye!');
  });

  it('μ-law from the caller and a silence prompt before the session opens are dropped quietly', async () => {
    const rig = stagesRig({ openLater: true, mulaw: true, agent: { silence_timeout_seconds: 1 } });
    rig.mulaw(new Uint8Array(160).fill(0xff));
    await rig.pipeline.shell.proceed(null);
    await playOut(rig, 1100);
    assert.deepEqual([rig.log.audio, rig.log.asked], [[], []]);
    rig.open();
    await settle();
    assert.equal(rig.log.asked.length, 1, 'the greeting, once open');
    rig.pipeline.end('api_hangup');
  });

  it('a session the model closes ends the call failed, as a media error', async () => {
    const rig = stagesRig();
    await settle();
    rig.emit({ type: 'closed', reason: 'idle' });
    const ended = await rig.outcome;
    assert.deepEqual([ended.status, ended.endReason], ['failed', 'media_error']);
  });
});
