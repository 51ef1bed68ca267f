import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FRAME_SAMPLES } from '../../platform/audio/frames.ts';
import { settle } from '../test-helpers.ts';
import { answerAfterTool, done, playOut, respond, stagesRig } from './test-helpers.ts';

// The speech-to-speech stages on the real call shell with the speech model and the agent's tools
// stubbed, on a clock moved by hand (model-stages.test.ts runs them against the fake Realtime
// server): the session opened with the agent's settings and the runtime's barge-in, the greeting
// asked word for word, a machine answered with the message, a model that cannot be reached or
// closes, the caller's audio and its drops, typed lines, tools and what follows them, end-call
// phrases, a response to speech over an agent that may not be interrupted, the end closing it.

describe('speech-to-speech stages: the session', () => {
  it("opens the model with the agent's settings and the runtime's barge-in, then asks for the greeting word for word", async () => {
    const rig = stagesRig();
    await settle();
    assert.deepEqual(rig.log.opened, [{ instructions: 'You are Ada.', voice: 'alloy', language: 'fr', tools: rig.toolbox.specs, turnEndSilenceMs: 700, interruptResponse: false, codec: 'pcm16' }]);
    assert.deepEqual(rig.log.asked, ['Say exactly this and nothing else: "Hello, Ada here."']);
    rig.pipeline.end('api_hangup');
    assert.equal(rig.log.closes, 1, 'the end closes the session');
  });

  it('a machine (answered, or its verdict first) is left the message at once, not greeted', async () => {
    const rig = stagesRig({ answeredBy: 'machine', agent: { voicemail: { action: 'leave_message', message: 'Call back.' } } });
    await settle();
    assert.deepEqual(rig.log.asked, ['Say exactly this and nothing else: "Call back."']);
    assert.equal(rig.pipeline.shell.voicemail, 'leaving');
    rig.pipeline.end('api_hangup');
  });

  it('a model that cannot be reached fails the call (llm_failed) and hangs up', async () => {
    const rig = stagesRig({ openFails: true });
    const ended = await rig.outcome;
    assert.deepEqual([ended.status, ended.endReason, ended.error], ['failed', 'media_error', { code: 'llm_failed', message: 'the speech model could not be reached: connection refused' }]);
    assert.deepEqual(rig.log.errors, [['llm_failed', 'connection refused']]);
    await settle();
    assert.deepEqual(rig.log.hangups, ['media_error']);
  });

  it('a session that opens after the call ended is closed at once', async () => {
    const rig = stagesRig();
    rig.pipeline.end('api_hangup');
    await settle();
    assert.equal(rig.log.closes, 1);
    assert.deepEqual(rig.log.asked, []);
  });

  it('the model closing the session fails the call; its errors are told and the call goes on', async () => {
    const rig = stagesRig();
    await settle();
    rig.emit({ type: 'error', code: 'rate_limit', message: 'slow down' });
    assert.equal(rig.pipeline.ended, false);
    rig.emit({ type: 'closed', reason: 'server going away' });
    const ended = await rig.outcome;
    assert.deepEqual([ended.status, ended.error], ['failed', { code: 'llm_failed', message: 'the speech model closed the session' }]);
    assert.deepEqual(rig.log.errors, [
      ['llm_failed', 'slow down'],
      ['llm_failed', 'the speech model closed the session: server going away'],
    ]);
    rig.emit({ type: 'error', code: null, message: 'after the end' });
    assert.equal(rig.log.errors.length, 2, 'nothing after the end');
  });
});

describe('speech-to-speech stages: audio and text in', () => {
  it("the caller's frames go to the model; the first drop is told once", async () => {
    const rig = stagesRig({ accepts: false });
    await settle();
    rig.frame(new Int16Array(FRAME_SAMPLES));
    rig.frame(new Int16Array(FRAME_SAMPLES));
    assert.deepEqual(rig.log.audio, [`pcm${FRAME_SAMPLES}`, `pcm${FRAME_SAMPLES}`]);
    assert.deepEqual(rig.log.errors, [['llm_failed', 'the speech model does not keep up: caller audio dropped']]);
    rig.pipeline.end('api_hangup');
  });

  it('a μ-law call sends the μ-law as it came', async () => {
    const rig = stagesRig({ mulaw: true });
    await settle();
    assert.equal(rig.log.opened[0].codec, 'mulaw');
    rig.mulaw(new Uint8Array(160));
    assert.deepEqual(rig.log.audio, ['mulaw160']);
    assert.deepEqual(rig.log.errors, []);
    rig.pipeline.end('api_hangup');
  });

  it("a typed line is the caller's entry and goes to the model; over the agent it cuts it when it may", async () => {
    const rig = stagesRig();
    await settle();
    rig.clock.advanceTo(1500);
    rig.typed('  book a table ');
    assert.deepEqual(rig.pipeline.shell.transcript, [{ role: 'user', text: 'book a table', start_ms: 500, end_ms: 500 }]);
    assert.deepEqual(rig.log.texts, ['book a table']);
    respond(rig, 'r1', 'Sure.');
    rig.typed('wait');
    assert.deepEqual(rig.log.interrupts, [{ itemId: 'item-r1', audioMs: 20 }]);
    rig.pipeline.end('api_hangup');
  });
});

describe('speech-to-speech stages: responses and what follows', () => {
  it('a response to speech over an agent that may not be interrupted is cancelled', async () => {
    const rig = stagesRig({ agent: { interruptible: false } });
    await settle();
    respond(rig, 'r1', 'We open at nine.');
    rig.emit({ type: 'speech_started', audioMs: 0 });
    rig.emit({ type: 'speech_stopped', audioMs: 500 });
    rig.emit({ type: 'response_started', responseId: 'r2' });
    assert.deepEqual(rig.log.interrupts, [undefined]);
    assert.equal(rig.pipeline.shell.transcript.length, 0);
    rig.pipeline.end('api_hangup');
  });

  it('a tool that ends the call: its result goes back, and the call ends once the answer is played', async () => {
    const rig = stagesRig({ tools: { end_call: [{ type: 'end_call', reason: 'agent_end_call' }] } });
    await settle();
    respond(rig, 'r1', 'One moment.');
    rig.emit({ type: 'function_call', responseId: 'r1', callId: 'c1', name: 'end_call', arguments: '{}' });
    rig.emit({ type: 'function_call', responseId: 'other', callId: 'c2', name: 'end_call', arguments: '{}' });
    await settle();
    assert.deepEqual(rig.log.ran, [['end_call', '{}']], 'a call in a response not speaking is not run');
    assert.deepEqual(rig.log.results, [['c1', 'end_call done']]);
    rig.emit(done('r1'));
    await playOut(rig);
    assert.equal(rig.pipeline.ended, false, 'the response with a tool call does not end the turn');
    respond(rig, 'r2', 'Goodbye.');
    rig.emit(done('r2'));
    await playOut(rig);
    const ended = await rig.outcome;
    assert.deepEqual([ended.status, ended.endReason], ['completed', 'agent_end_call']);
  });

  it('a tool that transfers: the call is transferred after the answer', async () => {
    const rig = stagesRig({ tools: { transfer_call: [{ type: 'transfer_call', to: '+15550100777', reason: 'asked' }] } });
    await settle();
    await answerAfterTool(rig, 'transfer_call', '{"to":"x"}');
    await playOut(rig);
    assert.equal((await rig.outcome).status, 'transferred');
    assert.deepEqual(rig.log.transfers, ['+15550100777']);
  });

  it("the caller's end-call phrase ends the call after the agent's answer; a blank phrase is no phrase", async () => {
    const rig = stagesRig();
    await settle();
    rig.emit({ type: 'speech_started', audioMs: 0 });
    rig.emit({ type: 'speech_stopped', audioMs: 300 });
    rig.emit({ type: 'user_transcript', itemId: 'u1', text: 'thanks', final: true });
    respond(rig, 'r1', 'You are welcome.');
    rig.emit(done('r1'));
    await playOut(rig);
    assert.equal(rig.pipeline.ended, false, 'no goodbye yet');
    rig.emit({ type: 'user_transcript', itemId: 'u2', text: 'ok goodbye', final: true });
    await settle();
    const ended = await rig.outcome;
    assert.deepEqual([ended.status, ended.endReason], ['completed', 'caller_goodbye']);
  });

  it('a goodbye while the agent answers waits for the answer to be played', async () => {
    const rig = stagesRig();
    await settle();
    respond(rig, 'r1', 'Bye then.');
    rig.emit({ type: 'user_transcript', itemId: 'u1', text: 'goodbye', final: true });
    await settle();
    assert.equal(rig.pipeline.ended, false);
    rig.emit(done('r1'));
    await playOut(rig);
    assert.equal((await rig.outcome).endReason, 'caller_goodbye');
  });

  it('a voicemail verdict cuts the agent; a transfer drops the response; the end closes the session', async () => {
    const rig = stagesRig({ agent: { voicemail: { action: 'hangup', message: null } } });
    await settle();
    respond(rig, 'r1', 'Hello?');
    rig.pipeline.shell.signal({ type: 'voicemail' });
    assert.deepEqual(rig.log.interrupts, [undefined]);
    rig.pipeline.shell.signal({ type: 'voicemail' });
    assert.equal(rig.log.interrupts.length, 1, 'nothing speaking: nothing to cut');
    rig.pipeline.end('api_hangup');
    assert.equal(rig.log.closes, 1);
  });
});

describe('speech-to-speech stages: before the session and around the edges', () => {
  it('frames, typed lines and prompts before the session opens are dropped quietly; the greeting follows the opening', async () => {
    const rig = stagesRig({ openLater: true });
    rig.frame(new Int16Array(FRAME_SAMPLES));
    rig.typed('hello?');
    rig.pipeline.shell.proceed({ kind: 'voicemail' });
    await settle();
    assert.deepEqual([rig.log.audio, rig.log.texts, rig.log.asked], [[], [], []]);
    assert.equal(rig.pipeline.shell.transcript.length, 1, 'the typed line is still the caller’s entry');
    rig.open();
    await settle();
    assert.equal(rig.log.asked.length, 0, 'the call had ended (voicemail): no greeting');
  });

  it('the caller speaking when the silence timer fires is no silence: no "still there?"', async () => {
    const rig = stagesRig({ agent: { interruptible: false } });
    await settle();
    respond(rig, 'r1', 'Hello.');
    rig.emit({ type: 'speech_started', audioMs: 0 });
    rig.emit(done('r1'));
    await playOut(rig, 5000);
    assert.deepEqual(rig.log.asked.slice(1), [], 'nothing asked while the caller has the floor');
    rig.pipeline.end('api_hangup');
  });

  it('a plain tool does not end the call; a function call with no response speaking runs nothing', async () => {
    const rig = stagesRig({ tools: { lookup: [{ type: 'function_call', name: 'lookup', arguments: {}, result: { error: 'none' } }] } });
    await settle();
    rig.emit({ type: 'function_call', responseId: 'none', callId: 'c0', name: 'lookup', arguments: '{}' });
    await settle();
    assert.deepEqual(rig.log.ran, []);
    await answerAfterTool(rig, 'lookup');
    await playOut(rig, 1000);
    assert.equal(rig.pipeline.ended, false);
    rig.pipeline.end('api_hangup');
  });

  it('a tool whose result comes after the end hands nothing back', async () => {
    let finish: () => void = () => undefined;
    const rig = stagesRig();
    rig.toolbox.run = async () => {
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
      return { output: 'late', terminal: false };
    };
    await settle();
    respond(rig, 'r1', 'One moment.');
    rig.emit({ type: 'function_call', responseId: 'r1', callId: 'c1', name: 'lookup', arguments: '{}' });
    await settle();
    rig.pipeline.end('api_hangup');
    finish();
    await settle();
    assert.deepEqual(rig.log.results, []);
  });

  it('an agent that may not be interrupted: the answer after its tool is said, and a typed line does not cut it', async () => {
    const rig = stagesRig({ agent: { interruptible: false } });
    await settle();
    rig.emit({ type: 'speech_started', audioMs: 0 });
    rig.clock.advanceTo(1400);
    rig.emit({ type: 'speech_stopped', audioMs: 400 });
    respond(rig, 'r1', 'Checking.');
    rig.emit({ type: 'function_call', responseId: 'r1', callId: 'c1', name: 'lookup', arguments: '{}' });
    await settle();
    rig.emit(done('r1'));
    rig.emit({ type: 'response_started', responseId: 'r2' });
    rig.typed('hurry');
    assert.deepEqual(rig.log.interrupts, []);
    rig.emit({ type: 'audio', responseId: 'r2', itemId: 'i2', pcm: new Int16Array(FRAME_SAMPLES).fill(100) });
    rig.emit({ type: 'agent_transcript', responseId: 'r2', itemId: 'i2', text: 'Done.', final: true });
    rig.emit(done('r2'));
    await playOut(rig, 400);
    const answer = rig.pipeline.shell.transcript.find((e) => e.text === 'Done.');
    assert.ok(answer?.latency_ms !== undefined && answer.latency_ms >= 0, 'the answer after the tool still answers the caller’s turn');
    rig.pipeline.end('api_hangup');
  });

  it('a transfer while the agent speaks drops its response without cutting the model', async () => {
    const rig = stagesRig();
    await settle();
    respond(rig, 'r1', 'Sure.');
    rig.pipeline.shell.signal({ type: 'transfer', to: '+15550100777' });
    assert.deepEqual(rig.log.interrupts, []);
    rig.pipeline.end('api_hangup');
  });

  it("the voicemail message said, the call ends as voicemail; a μ-law model's audio goes out as μ-law", async () => {
    const rig = stagesRig({ mulaw: true, answeredBy: 'machine', agent: { voicemail: { action: 'leave_message', message: 'Call back.' } } });
    await settle();
    rig.emit({ type: 'response_started', responseId: 'r1' });
    rig.emit({ type: 'audio_mulaw', responseId: 'r1', itemId: 'i1', mulaw: new Uint8Array(160) });
    rig.emit({ type: 'agent_transcript', responseId: 'r1', itemId: 'i1', text: 'Call back.', final: true });
    rig.emit(done('r1'));
    await playOut(rig, 200);
    assert.ok(rig.log.audio.includes('agent-mulaw'));
    const ended = await rig.outcome;
    assert.deepEqual([ended.status, ended.endReason], ['voicemail', 'voicemail']);
  });
});
