import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NO_TRACE, turnTrace } from '../tracing.ts';
import { speechRig, WORD_FRAMES } from './test-helpers.ts';

// The cascade's speech stage in the real call shell, with a text-to-speech stub whose audio is 100 ms
// (five frames) a word, on a clock moved by hand: the sentences synthesised in order in the agent's
// voice, the turn's transcript entry once played out (its latency from the caller's turn end to
// the first frame, its timings), the mark, what follows; a barge-in keeping the words heard; a
// machine, a transfer or the end stopping the turn unheard; a failing synthesis told.

const trace = () => turnTrace(NO_TRACE, 1, 0, 'caller');

describe('the speech stage', () => {
  it("says a reply's sentences in order in the agent's voice; played out, one entry with its latency and timings, a mark, then what follows", async () => {
    const rig = speechRig();
    await rig.playTo(1000);
    const turn = rig.stage().begin(1000, { stt_ms: 120, stt_wait_ms: 30 }, trace());
    await rig.playTo(1100);
    rig.stage().sentence(turn, 'One two.');
    rig.stage().sentence(turn, 'Three.');
    turn.after = { kind: 'end', reason: 'agent_end_call' };
    rig.stage().generated(turn);
    await rig.playTo(3000);
    assert.deepEqual(rig.log.synthesized, [
      ['One two.', 'builtin-ava'],
      ['Three.', 'builtin-ava'],
    ]);
    const ended = await rig.outcome;
    assert.deepEqual([ended.status, ended.endReason], ['completed', 'agent_end_call']);
    assert.equal(ended.transcript.length, 1);
    const entry = ended.transcript[0];
    assert.equal(entry.text, 'One two. Three.');
    assert.equal(entry.latency_ms, (turn.firstFrameAt as number) - 1000);
    assert.ok(entry.latency_ms !== undefined && entry.latency_ms >= 100, `the first frame came after the sentence was asked (${entry.latency_ms} ms)`);
    assert.deepEqual(entry.timings, { stt_ms: 120, stt_wait_ms: 30, llm_first_token_ms: 0, tts_first_audio_ms: 0 });
    assert.equal(entry.start_ms, turn.firstFrameAt);
    assert.ok(entry.end_ms >= entry.start_ms + 300, `three words played: ${entry.start_ms}-${entry.end_ms}`);
    assert.deepEqual(rig.log.marks, ['agent-turn-1']);
    assert.equal(rig.log.sent, 3 * WORD_FRAMES);
  });

  it('a fixed text answers nobody: no latency, no timings; then silence counts', async () => {
    const rig = speechRig();
    rig.stage().say('Are you still there? Hello.', null);
    await rig.playTo(2000);
    assert.deepEqual(rig.log.synthesized.map(([text]) => text), ['Are you still there?', 'Hello.']);
    const [entry] = rig.shell().transcript;
    assert.equal(entry.text, 'Are you still there? Hello.');
    assert.equal(entry.latency_ms, undefined);
    assert.equal(entry.timings, undefined);
    assert.equal(rig.stage().current, null);
    rig.pipeline.end('api_hangup');
  });

  it('a barge-in keeps the words heard as an interrupted entry, clears the far end, and stops the synthesis', async () => {
    const rig = speechRig();
    const turn = rig.stage().begin(0, { stt_ms: 0, stt_wait_ms: 0 }, trace());
    rig.stage().sentence(turn, 'one two three four five six');
    rig.stage().generated(turn);
    await rig.playTo(300);
    const clearsBefore = rig.log.clears;
    rig.pipeline.shell.signal({ type: 'barge_in' });
    assert.equal(rig.stage().current, null);
    assert.equal(turn.controller.signal.aborted, true);
    assert.equal(rig.log.clears, clearsBefore + 1);
    const [entry] = rig.shell().transcript;
    assert.equal(entry.interrupted, true);
    assert.ok(entry.text.length > 0 && 'one two three four five six'.startsWith(entry.text) && entry.text !== 'one two three four five six', `the words heard: "${entry.text}"`);
    await rig.playTo(2000);
    assert.equal(rig.shell().transcript.length, 1, 'nothing more of the turn');
    rig.pipeline.end('api_hangup');
  });

  it('a barge-in before any frame was heard records nothing', async () => {
    const rig = speechRig();
    const turn = rig.stage().begin(0, { stt_ms: 0, stt_wait_ms: 0 }, trace());
    rig.pipeline.shell.signal({ type: 'barge_in' });
    assert.equal(turn.controller.signal.aborted, true);
    assert.deepEqual(rig.shell().transcript, []);
    rig.pipeline.shell.signal({ type: 'barge_in' });
    rig.pipeline.end('api_hangup');
  });

  for (const signal of [{ type: 'voicemail' }, { type: 'transfer', to: '+15550100777' }] as const) {
    it(`a ${signal.type} stops the turn unheard: aborted, no entry, nothing follows`, async () => {
      const rig = speechRig();
      const turn = rig.stage().begin(0, { stt_ms: 0, stt_wait_ms: 0 }, trace());
      rig.stage().sentence(turn, 'one two three');
      rig.stage().generated(turn);
      await rig.playTo(100);
      rig.pipeline.shell.signal(signal);
      assert.equal(rig.stage().current, null);
      assert.equal(turn.controller.signal.aborted, true);
      await rig.playTo(2000);
      assert.deepEqual(rig.shell().transcript, []);
      assert.deepEqual(rig.log.marks, []);
      rig.pipeline.end('api_hangup');
    });
  }

  it('a synthesis that fails is told as tts_failed with its message; the sentences before it are said', async () => {
    const rig = speechRig({ failOn: 'broken' });
    rig.stage().say('Fine words. A broken one.', null);
    await rig.playTo(2000);
    assert.deepEqual(rig.log.errors, [['tts_failed', 'voice service down']]);
    assert.equal(rig.shell().transcript[0]?.text, 'Fine words.');
    rig.pipeline.end('api_hangup');
  });
});
