import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createTtsRegistry } from '../providers/tts/index.ts';
import { createRuntimeSpeech } from '../providers/tts/runtime-speech.ts';
import { createVoiceActivityDetector } from './audio/vad.ts';
import { createCallSession, STILL_THERE_PROMPT } from './call-session.ts';
import { createVirtualClock } from './virtual-clock.ts';
import { createMediaPair } from '../providers/telephony/media-pair.ts';
import type { SessionObserver, TranscriptEntry } from './outcome.ts';
import type { CallerUtterance, CallMedia } from '../ports/telephony.ts';
import type { CallAgent } from './call-agent.ts';
import { createPassThroughStt, createScriptedCaller } from '../providers/telephony/scripted-caller.ts';
import { bistroAgent, builtinEngine } from '../../test/support/bistro-agent.ts';

// The call session end to end in one process: a scripted caller speaks synthesised audio through
// a media pair; the session hears it through the real WebRTC VAD, answers with the built-in
// engine and the built-in voices, paced by a virtual clock as a sandbox call is: time stands still
// while the platform computes (synthesis, the VAD, the engine) and jumps from one timer to the next,
// so a loaded machine changes nothing of the call (a clock scaled from the wall, as these tests once
// used, ran a call 50 times faster than real time and a stall of the machine 50 times longer).

const SPEED = Number.POSITIVE_INFINITY;
const speech = createRuntimeSpeech(createTtsRegistry());
const engine = builtinEngine();

const agent: CallAgent = bistroAgent({
  transfer_number: '+15550100999',
  voicemail: { action: 'leave_message', message: 'Hi, this is Ada from the bistro, please call us back.' },
});

const vad = await createVoiceActivityDetector({ mode: 2 });
after(() => vad.close());

interface Run {
  events: Array<{ kind: string; value: unknown }>;
  clears: number;
  agentFrames: number;
}

async function converse(script: CallerUtterance[], overrides: Partial<CallAgent> = {}, options: { machine?: boolean; verdictFirst?: boolean; hangUpAfter?: number; failAfter?: number } = {}) {
  const clock = createVirtualClock({ speed: SPEED });
  const { stream, far } = createMediaPair();
  const stt = createPassThroughStt();
  const run: Run = { events: [], clears: 0, agentFrames: 0 };
  far.onClear(() => run.clears++);
  far.onAgentFrame(() => run.agentFrames++);
  const caller = createScriptedCaller(
    {
      clock,
      far,
      tts: speech,
      voice: 'builtin-ben',
      script,
      opening: options.machine ? "Hi, you've reached the voicemail of this number. Please leave a message after the tone." : undefined,
      hangUpAfterAgentTurns: options.hangUpAfter,
      failAfterAgentTurns: options.failAfter,
    },
    stt,
  );
  const transfers: string[] = [];
  const media: CallMedia = {
    stream,
    stt,
    answeredBy: options.machine ? 'machine' : 'human',
    // Twilio's asynchronous verdict that reached the process before the media did: handed over at once.
    onAnsweredBy: options.verdictFirst ? (listener) => listener('machine') : undefined,
    transfer: async (to) => {
      transfers.push(to);
      caller.stop();
      stream.close();
    },
    hangup: async () => {
      caller.stop();
      stream.close();
    },
  };
  const observer: SessionObserver = {
    transcript: (entry, turn) => run.events.push({ kind: 'transcript', value: { ...entry, turn } }),
    transfer: (to, reason) => run.events.push({ kind: 'transfer', value: { to, reason } }),
    error: (code, message) => run.events.push({ kind: 'error', value: { code, message } }),
  };
  const session = createCallSession({
    clock,
    media,
    stt,
    tts: speech,
    engine,
    agent: { ...agent, ...overrides },
    workspaceId: 'ws_test',
    variables: {},
    isSpeech: (frame) => vad.isSpeech(frame),
    observer,
  });
  caller.start();
  const outcome = await session.run();
  caller.stop();
  return { outcome, run, transfers };
}

const roles = (transcript: TranscriptEntry[]) => transcript.map((e) => e.role).join(',');

describe('call session (sandbox caller, real VAD, built-in engine and voices)', () => {
  it('greets, answers each caller turn, and ends on goodbye with latency figures', async () => {
    const { outcome, run } = await converse(['Hi, what are your opening hours?', 'Thanks, that is all. Goodbye!']);
    assert.equal(outcome.status, 'completed');
    assert.equal(outcome.endReason, 'caller_goodbye');
    assert.equal(roles(outcome.transcript), 'agent,user,agent,user,agent');
    assert.equal(outcome.transcript[0].text, agent.first_message);
    assert.equal(outcome.transcript[0].latency_ms, undefined, 'the greeting answers no caller turn');
    assert.equal(outcome.transcript[1].text, 'Hi, what are your opening hours?');
    for (const reply of [outcome.transcript[2], outcome.transcript[4]]) {
      assert.equal(typeof reply.latency_ms, 'number');
      assert.ok((reply.latency_ms as number) >= 0);
      assert.ok(reply.timings && reply.timings.stt_ms >= 0 && reply.timings.llm_first_token_ms >= 1);
    }
    assert.equal(outcome.latency?.turns, 2);
    // Times are on the call's timeline, in order.
    for (let i = 1; i < outcome.transcript.length; i++) assert.ok(outcome.transcript[i].start_ms >= outcome.transcript[i - 1].start_ms);
    assert.ok(outcome.durationMs >= outcome.transcript.at(-1)!.end_ms);
    assert.equal(run.events.filter((e) => e.kind === 'transcript').length, 5);
    assert.ok(run.agentFrames > 100, 'the agent spoke audio frames');
  });

  it('barge-in: the caller talks over the greeting; the agent stops, clears playback and keeps only what was played', async () => {
    const { outcome, run } = await converse([{ text: 'Sorry to interrupt, what time do you open?', interrupt_after_ms: 1200 }, 'Goodbye!']);
    const greeting = outcome.transcript[0];
    assert.equal(greeting.role, 'agent');
    assert.equal(greeting.interrupted, true);
    assert.ok(greeting.text.length > 0 && greeting.text.length < (agent.first_message as string).length, `cut greeting: ${greeting.text}`);
    assert.ok((agent.first_message as string).startsWith(greeting.text), 'what was played is a prefix, cut at a word');
    assert.ok(run.clears >= 1, 'the transport was told to clear playback');
    assert.equal(outcome.transcript[1].text, 'Sorry to interrupt, what time do you open?');
    assert.equal(outcome.endReason, 'caller_goodbye');
  });

  it('with interruptible false, the caller waits: no barge-in, the greeting is whole', async () => {
    const { outcome, run } = await converse([{ text: 'Sorry to interrupt, what time do you open?', interrupt_after_ms: 1200 }, 'Goodbye!'], { interruptible: false });
    assert.equal(outcome.transcript[0].interrupted, undefined);
    assert.equal(outcome.transcript[0].text, agent.first_message);
    assert.equal(run.clears, 0);
  });

  it('silence: asks once whether the caller is still there, then ends with silence_timeout', async () => {
    const { outcome } = await converse([]);
    assert.equal(outcome.status, 'completed');
    assert.equal(outcome.endReason, 'silence_timeout');
    assert.deepEqual(
      outcome.transcript.map((e) => e.text),
      [agent.first_message, STILL_THERE_PROMPT],
    );
  });

  it('transfers when the caller asks for a human and the agent has a transfer number', async () => {
    const { outcome, transfers, run } = await converse(['Can I speak to a human, please?']);
    assert.equal(outcome.status, 'transferred');
    assert.equal(outcome.transferredTo, '+15550100999');
    assert.deepEqual(transfers, ['+15550100999']);
    assert.ok(run.events.some((e) => e.kind === 'transfer'));
  });

  it('voicemail: waits for the machine greeting, leaves the message, ends as voicemail', async () => {
    const { outcome } = await converse([], {}, { machine: true });
    assert.equal(outcome.status, 'voicemail');
    assert.equal(outcome.endReason, 'voicemail');
    assert.equal(outcome.transcript.at(-1)?.text, agent.voicemail.message);
  });

  it('voicemail: a machine verdict that came before the media (its greeting over) leaves the message at once, no greeting', async () => {
    const { outcome } = await converse([], {}, { verdictFirst: true });
    assert.equal(outcome.status, 'voicemail');
    assert.equal(outcome.endReason, 'voicemail');
    assert.deepEqual(outcome.transcript.map((e) => `${e.role}: ${e.text}`), [`agent: ${agent.voicemail.message}`]);
  });

  it('ends as the caller hangs up (customer_hangup) or the media fails (failed, media_error)', async () => {
    const hungUp = await converse(['I have a question about my order.'], {}, { hangUpAfter: 2 });
    assert.equal(hungUp.outcome.status, 'completed');
    assert.equal(hungUp.outcome.endReason, 'customer_hangup');
    const failed = await converse(['I have a question about my order.'], {}, { failAfter: 2 });
    assert.equal(failed.outcome.status, 'failed');
    assert.equal(failed.outcome.endReason, 'media_error');
    assert.ok(failed.run.events.some((e) => e.kind === 'error'));
  });

  it('ends at max_duration_seconds', async () => {
    const { outcome } = await converse([], { max_duration_seconds: 3, silence_timeout_seconds: 60 });
    assert.equal(outcome.endReason, 'max_duration');
    assert.ok(outcome.durationMs >= 3000);
  });
});
