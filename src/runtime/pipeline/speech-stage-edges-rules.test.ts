import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recordingSpan, settle } from '../test-helpers.ts';
import { NO_TRACE, turnTrace } from '../tracing.ts';
import { speechRig, WORD_FRAMES } from './test-helpers.ts';

// The cascade's speech stage at its edges (speech-stage-rules.test.ts holds the main paths), on
// the real call shell and a clock moved by hand: the voice's first audio timed once a turn, one
// synthesis at a time and none after the turn was cut, sentences that come late, a turn complete
// only once its reply is generated, a reply with no words, a voice failing mid-reply, a reply
// over the speaker's bound, the words heard across sentences, and each turn's trace.

const heard = { stt_ms: 0, stt_wait_ms: 0 };
const untraced = () => turnTrace(NO_TRACE, 1, 0, 'caller');

describe('the speech stage, at its edges', () => {
  it("the voice's first audio is timed from asking it, once a turn; the voice is given the turn's abort signal", async () => {
    const rig = speechRig({ delayMs: 60 });
    await rig.playTo(1000);
    const turn = rig.stage().begin(900, heard, untraced());
    rig.stage().sentence(turn, 'One.');
    rig.stage().sentence(turn, 'Two three.');
    rig.stage().generated(turn);
    await rig.playTo(3000);
    assert.equal(rig.shell().transcript[0].timings?.tts_first_audio_ms, 60);
    assert.deepEqual(rig.log.signals, [turn.controller.signal, turn.controller.signal]);
    rig.pipeline.end('api_hangup');
  });

  it('sentences are synthesised one at a time, in order; one that comes after the voice went idle is said too', async () => {
    const rig = speechRig({ delayMs: 40 });
    const turn = rig.stage().begin(0, heard, untraced());
    rig.stage().sentence(turn, 'One two.');
    rig.stage().sentence(turn, 'Three.');
    await rig.playTo(1000);
    assert.equal(rig.log.mostInFlight, 1);
    rig.stage().sentence(turn, 'Four.');
    rig.stage().generated(turn);
    await rig.playTo(2000);
    assert.deepEqual(rig.log.synthesized.map(([text]) => text), ['One two.', 'Three.', 'Four.']);
    assert.equal(rig.shell().transcript[0].text, 'One two. Three. Four.');
  });

  it('played out but not yet generated, the turn goes on; generated once all is said, it completes', async () => {
    const rig = speechRig();
    const turn = rig.stage().begin(0, heard, untraced());
    rig.stage().sentence(turn, 'Let me see.');
    await rig.playTo(1500);
    assert.equal(rig.stage().current, turn, 'the engine is still answering');
    assert.deepEqual(rig.shell().transcript, []);
    rig.stage().generated(turn);
    await rig.playTo(1600);
    assert.equal(rig.stage().current, null);
    assert.equal(rig.shell().transcript[0].text, 'Let me see.');
  });

  it('a reply with no words writes no entry and no mark, its span no latency, and what follows it follows', async () => {
    const rig = speechRig();
    const { span, record } = recordingSpan();
    const turn = rig.stage().begin(0, heard, turnTrace(span, 1, 0, 'caller'));
    turn.after = { kind: 'end', reason: 'agent_end_call' };
    rig.stage().generated(turn);
    const ended = await rig.outcome;
    assert.deepEqual([ended.endReason, ended.transcript, rig.log.marks], ['agent_end_call', [], []]);
    assert.deepEqual([record.children[0].ends.length, 'latency_ms' in record.children[0].attributes], [1, false]);
  });

  it('audio the voice gives after the turn was cut is not played, and its failure then is not told', async () => {
    const rig = speechRig({ delayMs: 100, ignoresAbort: true });
    const turn = rig.stage().begin(0, heard, untraced());
    rig.stage().sentence(turn, 'one two three four');
    rig.stage().generated(turn);
    await rig.playTo(150);
    rig.pipeline.shell.signal({ type: 'barge_in' });
    const sent = rig.log.sent;
    await rig.playTo(1000);
    assert.equal(rig.log.sent, sent, 'nothing after the cut');

    // Cut with a sentence still waiting: it is never synthesised.
    const waiting = speechRig({ delayMs: 100 });
    const cut = waiting.stage().begin(0, heard, untraced());
    waiting.stage().sentence(cut, 'One two.');
    waiting.stage().sentence(cut, 'Never said.');
    await waiting.playTo(150);
    waiting.pipeline.shell.signal({ type: 'barge_in' });
    await waiting.playTo(1000);
    assert.deepEqual(waiting.log.synthesized.map(([text]) => text), ['One two.']);

    const failing = speechRig({ delayMs: 100, failOn: 'broken' });
    failing.stage().say('A broken line.', null);
    failing.pipeline.shell.signal({ type: 'barge_in' });
    await failing.playTo(500);
    assert.deepEqual(failing.log.errors, []);
  });

  it('a voice failing mid-reply: the sentences after it go unsaid, and the turn ends with what was said', async () => {
    const rig = speechRig({ failOn: 'broken' });
    rig.stage().say('Fine words. A broken one. Never said.', null);
    await rig.playTo(2000);
    assert.deepEqual(rig.log.synthesized.map(([text]) => text), ['Fine words.', 'A broken one.']);
    assert.equal(rig.stage().current, null, 'the turn is over: silence counts again');
    assert.deepEqual(rig.shell().transcript.map((e) => e.text), ['Fine words.']);
    rig.pipeline.end('api_hangup');
  });

  it('a reply over the speaker’s bound (five minutes queued) fails the call as a media error', async () => {
    const rig = speechRig();
    const words = Array.from({ length: 15_001 / WORD_FRAMES + 1 }, () => 'la').join(' ');
    rig.stage().say(words, null);
    await settle();
    const ended = await rig.outcome;
    assert.deepEqual([ended.status, ended.endReason, ended.error], ['failed', 'media_error', { code: 'media_error', message: 'the agent reply exceeded the audio bound' }]);
  });

  it("the words heard run across sentences, a space between; a cut after one frame of a long word hears nothing", async () => {
    const rig = speechRig();
    const turn = rig.stage().begin(0, heard, untraced());
    rig.stage().sentence(turn, 'One two.');
    rig.stage().sentence(turn, 'Three four.');
    rig.stage().generated(turn);
    await rig.playTo(2 * WORD_FRAMES * 20 + WORD_FRAMES * 20 + 10);
    rig.pipeline.shell.signal({ type: 'barge_in' });
    assert.equal(rig.shell().transcript[0].text, 'One two. Three');

    const early = speechRig();
    const cut = early.stage().begin(0, heard, untraced());
    early.stage().sentence(cut, 'Supercalifragilistic.');
    await early.playTo(10);
    early.pipeline.shell.signal({ type: 'barge_in' });
    assert.deepEqual(early.shell().transcript, []);
  });

  it("each turn's trace: its end and latency when played out, interrupted when cut or stopped, the voice's failure", async () => {
    const played = recordingSpan();
    const rig = speechRig();
    await rig.playTo(1000);
    const turn = rig.stage().begin(900, heard, turnTrace(played.span, 1, 900, 'caller'));
    rig.stage().sentence(turn, 'Hello.');
    rig.stage().generated(turn);
    await rig.playTo(1500);
    const [span] = played.record.children;
    assert.deepEqual([span.attributes.latency_ms, span.ends.length], [(turn.firstFrameAt as number) - 900, 1]);
    assert.deepEqual(
      span.children.map((c) => c.name),
      ['tts.first_audio', 'first_frame_out'],
    );

    for (const signal of [{ type: 'barge_in' }, { type: 'voicemail' }] as const) {
      const cut = recordingSpan();
      const other = speechRig();
      const cutTurn = other.stage().begin(0, heard, turnTrace(cut.span, 1, 0, 'caller'));
      other.stage().sentence(cutTurn, 'one two three');
      await other.playTo(100);
      other.pipeline.shell.signal(signal);
      assert.deepEqual(cut.record.children[0].attributes.interrupted, true, signal.type);
    }

    const fixed = recordingSpan();
    const greeting = speechRig({ trace: fixed.span });
    greeting.stage().say('Hello.', null);
    await greeting.playTo(500);
    assert.equal(fixed.record.children[0].ends.length, 1);
    assert.equal('latency_ms' in fixed.record.children[0].attributes, false, 'a fixed text answers nobody');

    const failed = recordingSpan();
    const broken = speechRig({ failOn: 'broken', trace: failed.span });
    broken.stage().say('A broken line.', null);
    await broken.playTo(500);
    assert.deepEqual([failed.record.children[0].attributes['turn.kind'], failed.record.children[0].failed], ['agent', ['tts_failed']]);
  });
});
