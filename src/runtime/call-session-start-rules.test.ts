import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bistroAgent } from '../../test/support/bistro-agent.ts';
import type { DialogueEngine, RespondInput } from '../engine/types.ts';
import { FRAME_SAMPLES } from '../platform/audio/frames.ts';
import type { MediaStream } from '../ports/media.ts';
import type { CallMedia } from '../ports/telephony.ts';
import type { TextToSpeech } from '../ports/tts.ts';
import type { CallAgent } from './call-agent.ts';
import { createCallSession } from './call-session.ts';
import { manualClock, recordingSpan, settle } from './test-helpers.ts';
import type { TraceSpan } from './tracing.ts';

// The cascade call's start and typed turns (call-session.ts), with the engine, recogniser and voice
// stubbed, on a clock moved by hand: a human is greeted with the engine's greeting; a machine is
// hung up on, or its greeting awaited, or (its verdict before the start) the message left at once;
// a typed line is a turn at once, over the agent only when it may be interrupted, and none while
// the message is left.

function sessionRig(options: { agent?: Partial<CallAgent>; answeredBy?: 'human' | 'machine'; verdictFirst?: boolean; trace?: TraceSpan } = {}) {
  const clock = manualClock();
  clock.advanceTo(1000);
  const log = { said: [] as string[], asked: [] as RespondInput[], clears: 0 };
  let verdict: (who: 'human' | 'machine') => void = () => undefined;
  let text: (line: string) => void = () => undefined;
  const stream: MediaStream = {
    onFrame: () => undefined,
    onText: (listener) => {
      text = listener;
    },
    onMark: () => undefined,
    onClose: () => undefined,
    send: () => true,
    mark: () => undefined,
    clear: () => void log.clears++,
    close: () => undefined,
  };
  const media: CallMedia = {
    stream,
    answeredBy: options.answeredBy ?? 'human',
    // A transport that had the verdict before the media tells it as the listener registers.
    onAnsweredBy: (listener) => {
      verdict = listener;
      if (options.verdictFirst) listener('machine');
    },
    transfer: async () => undefined,
    hangup: async () => undefined,
  };
  const tts: TextToSpeech = {
    async *synthesize(sentence) {
      log.said.push(sentence);
      yield new Int16Array(FRAME_SAMPLES * 10).fill(400);
    },
  };
  const engine = {
    greet: (agent: CallAgent, variables: Record<string, string>) => ({ role: 'agent', text: `Hi ${variables.name}, ${agent.name} here.` }),
    respond: async (input: RespondInput) => {
      log.asked.push(input);
      input.onReplyDelta?.('Noted.');
      return { reply: 'Noted.', actions: [], ended: false };
    },
  } as unknown as DialogueEngine;
  const session = createCallSession({
    clock,
    media,
    stt: { transcribe: async () => '' },
    tts,
    engine,
    agent: bistroAgent({ max_duration_seconds: 600, ...options.agent }),
    workspaceId: 'ws_start',
    variables: { name: 'Ann' },
    isSpeech: (frame) => frame[0] !== 0,
    observer: { transcript: () => undefined, transfer: () => undefined, error: () => undefined },
    trace: options.trace,
  });
  return { clock, log, session, verdict: (who: 'human' | 'machine') => verdict(who), typed: (line: string) => text(line) };
}


describe('a cascade call: its start', () => {
  it("greets a human with the engine's greeting for the call's variables", async () => {
    const rig = sessionRig();
    rig.session.run();
    await settle();
    assert.deepEqual(rig.log.said, ['Hi Ann, Ada here.']);
    assert.equal(rig.session.shell.voicemail, 'none');
    rig.session.end('api_hangup');
  });

  it('a machine: hung up on (voicemail hangup), or its greeting awaited before the message is left', async () => {
    const hangup = sessionRig({ answeredBy: 'machine', agent: { voicemail: { action: 'hangup', message: null } } });
    const outcome = await Promise.race([hangup.session.run(), settle().then(() => null)]);
    assert.deepEqual([outcome?.status, outcome?.endReason], ['voicemail', 'voicemail']);
    assert.deepEqual(hangup.log.said, []);

    const leave = sessionRig({ answeredBy: 'machine', agent: { voicemail: { action: 'leave_message', message: 'Call us back.' } } });
    leave.session.run();
    await settle();
    assert.equal(leave.session.shell.voicemail, 'pending');
    assert.deepEqual(leave.log.said, [], 'nothing said over its greeting');
    leave.session.end('api_hangup');
  });

  it('a machine verdict before the start: the message is left at once instead of the greeting', async () => {
    const rig = sessionRig({ verdictFirst: true, agent: { voicemail: { action: 'leave_message', message: 'Call us back.' } } });
    const outcome = rig.session.run();
    await settle();
    assert.deepEqual(rig.log.said, ['Call us back.']);
    rig.clock.advanceTo(2000);
    await settle();
    assert.equal((await outcome).status, 'voicemail');
  });
});

describe('a cascade call: typed turns', () => {
  it("a typed line is the caller's turn at once, answered by the engine", async () => {
    const rig = sessionRig();
    rig.session.run();
    await settle();
    rig.clock.advanceTo(2000);
    await settle();
    rig.clock.advanceTo(3000);
    rig.typed('  a table for two ');
    await settle();
    assert.deepEqual(rig.session.shell.transcript.filter((e) => e.role === 'user'), [{ role: 'user', text: 'a table for two', start_ms: 2000, end_ms: 2000 }]);
    assert.equal(rig.log.asked[0]?.userText, 'a table for two');
    rig.session.end('api_hangup');
  });

  it('over the agent: cuts it when it may be interrupted; is dropped when it may not', async () => {
    const cut = sessionRig();
    cut.session.run();
    await settle();
    cut.typed('wait');
    await settle();
    assert.equal(cut.log.clears, 1, 'the greeting was cut');
    assert.equal(cut.log.asked.length, 1);
    cut.verdict('human');
    assert.equal(cut.session.shell.voicemail, 'none', 'a human verdict after the start changes nothing');
    cut.session.end('api_hangup');

    const firm = sessionRig({ agent: { interruptible: false } });
    firm.session.run();
    await settle();
    firm.typed('wait');
    await settle();
    assert.equal(firm.log.clears, 0);
    assert.deepEqual(firm.log.asked, []);
    assert.equal(firm.session.shell.transcript.length, 0);
    firm.session.end('api_hangup');
  });

  it('an agent that may not be interrupted takes a typed line once it is silent; the turn is traced as typed', async () => {
    const { span, record } = recordingSpan();
    const firm = sessionRig({ agent: { interruptible: false }, trace: span });
    firm.session.run();
    await settle();
    for (let t = 1020; t <= 1400; t += 20) {
      firm.clock.advanceTo(t);
      await settle();
    }
    firm.typed('a table for two');
    await settle();
    assert.equal(firm.log.asked[0]?.userText, 'a table for two');
    assert.deepEqual(
      record.children.map((turn) => [turn.attributes['turn.index'], turn.attributes['turn.kind']]),
      [
        [1, 'agent'],
        [2, 'typed'],
      ],
    );
    firm.session.end('api_hangup');
  });

  it('no typed turn while the voicemail message is left', async () => {
    const rig = sessionRig({ answeredBy: 'machine', agent: { voicemail: { action: 'leave_message', message: 'Call us back.' } } });
    rig.session.run();
    rig.session.shell.leaveVoicemail();
    rig.typed('hello?');
    await settle();
    assert.deepEqual(rig.log.asked, []);
    rig.session.end('api_hangup');
  });
});
