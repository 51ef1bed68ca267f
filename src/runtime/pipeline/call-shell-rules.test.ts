import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bistroAgent } from '../../../test/support/bistro-agent.ts';
import type { MediaCloseReason, MediaStream } from '../../ports/media.ts';
import type { CallMedia } from '../../ports/telephony.ts';
import type { After } from '../agent-turn.ts';
import type { CallAgent } from '../call-agent.ts';
import type { TranscriptEntry } from '../outcome.ts';
import { manualClock, settle } from '../test-helpers.ts';
import { type CallShell, type CallSignal, createCallPipeline, STILL_THERE_PROMPT } from './call-pipeline.ts';

// The call shell's rules with its stages stubbed (call-pipeline.ts, call-end.ts, call-rules.ts), on
// a clock moved by hand and a transport whose listeners the test calls: where each caller frame,
// μ-law buffer, typed line and digit goes, and not once the call ended; the far end's hang-up and
// failure; the maximum duration to the millisecond; silence ("still there?", then the end); a
// machine's verdict before and after the start; a transfer; the hang-up rule and the outcome.

interface RigOptions {
  agent?: Partial<CallAgent>;
  /** The transport carries μ-law; `codec` is what the stages ask for. */
  mulaw?: boolean;
  codec?: 'mulaw' | 'pcm16';
  transferFails?: boolean;
  /** The clock time the call is answered (the pipeline made). */
  answeredAt?: number;
  /** No recorder (a call not recorded). */
  unrecorded?: boolean;
}

function shellRig(options: RigOptions = {}) {
  const clock = manualClock();
  clock.advanceTo(options.answeredAt ?? 0);
  const log = {
    hangups: [] as string[],
    transfers: [] as string[],
    observed: { transfers: [] as Array<[string, string]>, errors: [] as Array<[string, string]>, turns: [] as number[] },
    recorded: [] as Array<[string, number, number]>,
    stageFrames: [] as Array<[string, number, number]>,
    signals: [] as CallSignal[],
    said: [] as Array<[string, After | null]>,
    typed: [] as string[],
    farTranscript: [] as Array<{ role: string; text: string }>,
    clears: 0,
    starts: 0,
  };
  const listeners = {} as {
    frame?: (frame: Int16Array) => void;
    mulaw?: (mulaw: Uint8Array) => void;
    text?: (text: string) => void;
    dtmf?: (digit: string) => void;
    close?: (reason: MediaCloseReason) => void;
    answeredBy?: (who: 'human' | 'machine') => void;
  };
  const stream: MediaStream = {
    onFrame: (l) => {
      listeners.frame = l;
    },
    onMark: () => undefined,
    onDtmf: (l) => {
      listeners.dtmf = l;
    },
    onText: (l) => {
      listeners.text = l;
    },
    transcript: (line) => void log.farTranscript.push(line),
    onClose: (l) => {
      listeners.close = l;
    },
    send: () => true,
    mark: () => undefined,
    clear: () => void log.clears++,
    close: () => undefined,
    ...(options.mulaw ? { mulaw: { onAudio: (l: (mulaw: Uint8Array) => void) => void Object.assign(listeners, { mulaw: l }), send: () => true } } : {}),
  };
  const media: CallMedia = {
    stream,
    answeredBy: 'human',
    onAnsweredBy: (l) => {
      listeners.answeredBy = l;
    },
    transfer: async (to) => {
      log.transfers.push(to);
      if (options.transferFails) throw new Error('the carrier refused');
    },
    hangup: async (reason) => void log.hangups.push(String(reason)),
  };
  let busy = false;
  let shell!: CallShell;
  const pipeline = createCallPipeline(
    {
      clock,
      media,
      agent: bistroAgent({ max_duration_seconds: 60, silence_timeout_seconds: 5, ...options.agent }),
      codec: options.codec,
      observer: {
        transcript: (_entry, turn) => void log.observed.turns.push(turn),
        transfer: (to, reason) => void log.observed.transfers.push([to, reason]),
        error: (code, message) => void log.observed.errors.push([code, message]),
      },
      recorder: options.unrecorded
        ? undefined
        : {
            addCaller: (at, frame) => void log.recorded.push(['caller', at, frame.length]),
            addAgent: (at, frame) => void log.recorded.push(['agent', at, frame.length]),
            addCallerMulaw: (at, mulaw) => void log.recorded.push(['callerMulaw', at, mulaw.length]),
            addAgentMulaw: (at, frame) => void log.recorded.push(['agentMulaw', at, frame.length]),
          },
    },
    (built) => {
      shell = built;
      return {
        stages: [
          {
            frame: (frame, at) => void log.stageFrames.push(['frame', at, frame.length]),
            mulaw: (mulaw, at) => void log.stageFrames.push(['mulaw', at, mulaw.length]),
            signal: (s) => void log.signals.push(s),
          },
          // A stage that takes no audio.
          {},
        ],
        start: () => void log.starts++,
        say: (text, after) => void log.said.push([text, after]),
        typed: (text) => void log.typed.push(text),
        busy: () => busy,
      };
    },
  );
  return {
    clock,
    log,
    listeners,
    pipeline,
    get shell() {
      return shell;
    },
    setBusy(value: boolean) {
      busy = value;
    },
  };
}


/** `send` once: recorded and staged as expected; then the call ends, and `send` again reaches neither. */
function deliveredUntilTheEnd(rig: ReturnType<typeof shellRig>, send: () => void, recorded: [string, number, number], staged: [string, number, number]) {
  send();
  assert.deepEqual(rig.log.recorded, [recorded]);
  assert.deepEqual(rig.log.stageFrames, [staged]);
  rig.pipeline.end('api_hangup');
  send();
  assert.equal(rig.log.recorded.length, 1, 'nothing after the end');
  assert.equal(rig.log.stageFrames.length, 1);
}

describe('the call shell: what the transport brings', () => {
  it("records each caller frame at the call's millisecond and hands it to the stages, until the call ends", async () => {
    const rig = shellRig({ answeredAt: 1000 });
    const outcome = rig.pipeline.run();
    assert.equal(rig.shell.codec, 'pcm16');
    rig.clock.advanceTo(1040);
    deliveredUntilTheEnd(rig, () => rig.listeners.frame?.(new Int16Array(320)), ['caller', 40, 320], ['frame', 1040, 320]);
    assert.deepEqual([(await outcome).status, (await outcome).endReason, (await outcome).durationMs], ['completed', 'api_hangup', 40]);
  });

  it("a μ-law transport's audio as it is, when the stages ask for μ-law; PCM frames otherwise", async () => {
    const rig = shellRig({ mulaw: true, codec: 'mulaw' });
    rig.pipeline.run();
    assert.equal(rig.shell.codec, 'mulaw');
    rig.clock.advanceTo(60);
    assert.equal(rig.listeners.frame, undefined, 'no PCM listener');
    deliveredUntilTheEnd(rig, () => rig.listeners.mulaw?.(new Uint8Array(160)), ['callerMulaw', 60, 160], ['mulaw', 60, 160]);
    for (const [mulaw, codec] of [
      [true, 'pcm16'],
      [false, 'mulaw'],
    ] as const) {
      const other = shellRig({ mulaw, codec });
      other.pipeline.run();
      assert.equal(other.shell.codec, 'pcm16', `transport μ-law ${mulaw}, asked ${codec}`);
      assert.ok(other.listeners.frame);
      assert.equal(other.listeners.mulaw, undefined);
    }
  });

  it('typed text goes trimmed to the parts; blank text, and any after the end, does not', () => {
    const rig = shellRig();
    rig.pipeline.run();
    rig.listeners.text?.('  book a table  ');
    rig.listeners.text?.('   ');
    assert.deepEqual(rig.log.typed, ['book a table']);
    rig.pipeline.end('api_hangup');
    rig.listeners.text?.('late');
    assert.deepEqual(rig.log.typed, ['book a table']);
  });

  it("a digit is the caller's transcript entry at its millisecond, told to the observer and the far end; none after the end", () => {
    const rig = shellRig();
    rig.pipeline.run();
    rig.clock.advanceTo(2500);
    rig.listeners.dtmf?.('7');
    assert.deepEqual(rig.shell.transcript, [{ role: 'user', text: '7', start_ms: 2500, end_ms: 2500, dtmf: true }]);
    assert.deepEqual(rig.log.observed.turns, [1]);
    assert.deepEqual(rig.log.farTranscript, [{ role: 'user', text: '7' }]);
    rig.pipeline.end('api_hangup');
    rig.listeners.dtmf?.('8');
    assert.equal(rig.shell.transcript.length, 1);
  });

  it('the caller hanging up completes the call (customer_hangup) and hangs nothing up', async () => {
    const rig = shellRig();
    const outcome = rig.pipeline.run();
    rig.clock.advanceTo(3000);
    rig.listeners.close?.({ kind: 'hangup' });
    const ended = await outcome;
    assert.deepEqual([ended.status, ended.endReason, ended.error, ended.durationMs], ['completed', 'customer_hangup', undefined, 3000]);
    await settle();
    assert.deepEqual(rig.log.hangups, []);
    assert.deepEqual(rig.log.observed.errors, []);
    assert.deepEqual(rig.log.signals, [{ type: 'end' }]);
  });

  it('a failed transport fails the call with its message, told to the observer, and hangs nothing up', async () => {
    const rig = shellRig();
    const outcome = rig.pipeline.run();
    rig.listeners.close?.({ kind: 'error', message: 'socket reset' });
    const ended = await outcome;
    assert.deepEqual([ended.status, ended.endReason, ended.error], ['failed', 'media_error', { code: 'media_error', message: 'socket reset' }]);
    assert.deepEqual(rig.log.observed.errors, [['media_error', 'socket reset']]);
    await settle();
    assert.deepEqual(rig.log.hangups, []);
  });
});

describe('the call shell: recording', () => {
  it("records the agent's frames at their call millisecond, PCM or μ-law; an unrecorded call takes audio all the same", async () => {
    const rig = shellRig({ mulaw: true, codec: 'mulaw', answeredAt: 500 });
    rig.pipeline.run();
    rig.clock.advanceTo(700);
    rig.shell.speaker.enqueue(new Int16Array(320));
    rig.shell.speaker.enqueue(new Uint8Array(160));
    rig.clock.advanceTo(800);
    assert.deepEqual(rig.log.recorded, [
      ['agent', 200, 320],
      ['agentMulaw', 220, 160],
    ]);
    rig.pipeline.end('api_hangup');

    const bare = shellRig({ unrecorded: true, mulaw: true, codec: 'mulaw' });
    bare.pipeline.run();
    bare.listeners.mulaw?.(new Uint8Array(160));
    bare.shell.speaker.enqueue(new Uint8Array(160));
    bare.clock.advanceTo(100);
    assert.deepEqual(bare.log.stageFrames, [['mulaw', 0, 160]]);
    const pcm = shellRig({ unrecorded: true });
    pcm.pipeline.run();
    pcm.listeners.frame?.(new Int16Array(320));
    pcm.shell.speaker.enqueue(new Int16Array(320));
    pcm.clock.advanceTo(100);
    assert.deepEqual(pcm.log.stageFrames, [['frame', 0, 320]]);
  });
});

describe('the call shell: time and the end', () => {
  it('ends at max_duration_seconds to the millisecond, hangs up with that reason, and cancels every timer', async () => {
    const rig = shellRig({ agent: { max_duration_seconds: 30 } });
    const outcome = rig.pipeline.run();
    rig.shell.later(() => assert.fail('a timer outlived the call'), 45_000);
    rig.clock.advanceTo(29_999);
    assert.equal(rig.pipeline.ended, false);
    assert.equal(rig.pipeline.elapsedMs(), 29_999);
    rig.clock.advanceTo(30_000);
    assert.equal(rig.pipeline.ended, true);
    const ended = await outcome;
    assert.deepEqual([ended.status, ended.endReason, ended.durationMs], ['completed', 'max_duration', 30_000]);
    assert.equal(rig.clock.armed(), 0, 'every timer cancelled');
    rig.clock.advanceTo(60_000);
    await settle();
    assert.deepEqual(rig.log.hangups, ['max_duration']);
  });

  it('ends once: a second end changes nothing and hangs up no more', async () => {
    const rig = shellRig();
    const outcome = rig.pipeline.run();
    rig.clock.advanceTo(500);
    assert.equal(rig.shell.ended, false);
    rig.pipeline.end('insufficient_balance');
    assert.equal(rig.shell.ended, true, 'the stages see it ended');
    rig.clock.advanceTo(900);
    rig.pipeline.end('api_hangup');
    rig.shell.finish({ status: 'failed', endReason: 'media_error' });
    const ended = await outcome;
    assert.deepEqual([ended.endReason, ended.durationMs], ['insufficient_balance', 500]);
    await settle();
    assert.deepEqual(rig.log.hangups, ['insufficient_balance']);
    assert.deepEqual(rig.log.signals, [{ type: 'end' }]);
  });

  it('the outcome carries the transcript and its latency; a record is told with its turn number', async () => {
    const rig = shellRig();
    const outcome = rig.pipeline.run();
    const caller: TranscriptEntry = { role: 'user', text: 'hi', start_ms: 0, end_ms: 400 };
    const agent: TranscriptEntry = { role: 'agent', text: 'hello', start_ms: 900, end_ms: 1500, latency_ms: 500 } as TranscriptEntry;
    rig.shell.record(caller);
    rig.shell.record(agent);
    assert.deepEqual(rig.log.observed.turns, [1, 2]);
    assert.deepEqual(rig.log.farTranscript, [
      { role: 'user', text: 'hi' },
      { role: 'agent', text: 'hello' },
    ]);
    rig.pipeline.end('api_hangup');
    const ended = await outcome;
    assert.deepEqual(ended.transcript, [caller, agent]);
    assert.ok(ended.latency, 'a latency summary of the agent turn');
  });

  it('a reply over the audio bound fails the call with the message given', async () => {
    const rig = shellRig();
    const outcome = rig.pipeline.run();
    rig.shell.overflow('too much audio');
    const ended = await outcome;
    assert.deepEqual([ended.status, ended.endReason, ended.error], ['failed', 'media_error', { code: 'media_error', message: 'too much audio' }]);
    await settle();
    assert.deepEqual(rig.log.hangups, ['media_error']);
  });
});

describe('the call shell: silence', () => {
  it('asks "still there?" silence_timeout_seconds after the agent is done, then ends only after a second silence', async () => {
    const rig = shellRig({ agent: { silence_timeout_seconds: 4 } });
    const outcome = rig.pipeline.run();
    rig.clock.advanceTo(1000);
    await rig.shell.proceed(null);
    rig.clock.advanceTo(4999);
    assert.deepEqual(rig.log.said, []);
    rig.clock.advanceTo(5000);
    assert.deepEqual(rig.log.said, [[STILL_THERE_PROMPT, null]]);
    await rig.shell.proceed(null);
    rig.clock.advanceTo(8999);
    assert.equal(rig.pipeline.ended, false);
    rig.clock.advanceTo(9000);
    const ended = await outcome;
    assert.deepEqual([ended.status, ended.endReason, ended.durationMs], ['completed', 'silence_timeout', 9000]);
  });

  it('the caller stirring stops the count; speaking again asks "still there?" anew before any end', async () => {
    const rig = shellRig({ agent: { silence_timeout_seconds: 2 } });
    rig.pipeline.run();
    await rig.shell.proceed(null);
    rig.clock.advanceTo(1500);
    rig.shell.callerActive();
    rig.clock.advanceTo(10_000);
    assert.deepEqual(rig.log.said, [], 'no prompt while the caller has the floor');
    await rig.shell.proceed(null);
    rig.clock.advanceTo(12_000);
    assert.equal(rig.log.said.length, 1);
    rig.shell.callerSpoke();
    await rig.shell.proceed(null);
    rig.clock.advanceTo(14_000);
    assert.equal(rig.pipeline.ended, false, 'a new silence after speech asks again');
    assert.equal(rig.log.said.length, 2);
  });

  it('a silence that ends while the agent is busy neither asks nor ends; arming again restarts the count', async () => {
    const rig = shellRig({ agent: { silence_timeout_seconds: 2 } });
    rig.pipeline.run();
    await rig.shell.proceed(null);
    rig.clock.advanceTo(1000);
    await rig.shell.proceed(null);
    rig.clock.advanceTo(2500);
    assert.deepEqual(rig.log.said, [], 'the first count was replaced');
    rig.setBusy(true);
    rig.clock.advanceTo(3000);
    assert.deepEqual(rig.log.said, []);
    assert.equal(rig.pipeline.ended, false);
  });

  it('what follows the agent: the end with its reason, the voicemail end, a transfer; nothing once ended', async () => {
    for (const [after, status, endReason] of [
      [{ kind: 'end', reason: 'caller_goodbye' }, 'completed', 'caller_goodbye'],
      [{ kind: 'end', reason: 'agent_end_call' }, 'completed', 'agent_end_call'],
      [{ kind: 'voicemail' }, 'voicemail', 'voicemail'],
      [{ kind: 'transfer', to: '+15550100777', reason: 'asked for a human' }, 'transferred', 'transferred'],
    ] as const) {
      const rig = shellRig();
      const outcome = rig.pipeline.run();
      await rig.shell.proceed(after);
      const ended = await outcome;
      assert.deepEqual([ended.status, ended.endReason], [status, endReason], JSON.stringify(after));
      await rig.shell.proceed(null);
      assert.equal(rig.clock.armed(), 0, 'no silence armed after the end');
    }
  });
});

describe('the call shell: transfers and machines', () => {
  it('a transfer is told, signalled, clears the agent, hands the call over and ends it transferred, hanging nothing up', async () => {
    const rig = shellRig();
    const outcome = rig.pipeline.run();
    await rig.pipeline.transfer('+15550100777');
    const ended = await outcome;
    assert.deepEqual([ended.status, ended.endReason, ended.transferredTo], ['transferred', 'transferred', '+15550100777']);
    assert.deepEqual(rig.log.observed.transfers, [['+15550100777', 'requested through the API']]);
    assert.deepEqual(rig.log.signals, [{ type: 'transfer', to: '+15550100777' }, { type: 'end' }]);
    assert.deepEqual(rig.log.transfers, ['+15550100777']);
    await settle();
    assert.deepEqual(rig.log.hangups, []);
    await rig.pipeline.transfer('+15550100888');
    assert.deepEqual(rig.log.transfers, ['+15550100777'], 'an ended call is not transferred');
  });

  it('a transfer the carrier refuses is told as transfer_failed; the call still ends transferred', async () => {
    const rig = shellRig({ transferFails: true });
    const outcome = rig.pipeline.run();
    await rig.pipeline.transfer('+15550100777', 'the agent asked');
    assert.deepEqual(rig.log.observed.errors, [['transfer_failed', 'Error: the carrier refused']]);
    assert.deepEqual(rig.log.observed.transfers, [['+15550100777', 'the agent asked']]);
    assert.equal((await outcome).status, 'transferred');
  });

  it('a machine verdict before the call started is kept for the start; after it, the agent is cut and the message left', async () => {
    const early = shellRig();
    early.pipeline.run();
    assert.equal(early.shell.machineHeard, false);
    early.listeners.answeredBy?.('human');
    assert.equal(early.shell.machineHeard, false, 'a human verdict changes nothing');
    early.listeners.answeredBy?.('machine');
    assert.equal(early.shell.machineHeard, true, 'the start has not run its course yet');
    assert.equal(early.shell.voicemail, 'none');

    const late = shellRig({ agent: { voicemail: { action: 'leave_message', message: 'Please call back.' } } });
    late.pipeline.run();
    await settle();
    assert.equal(late.log.starts, 1);
    late.listeners.answeredBy?.('machine');
    assert.equal(late.shell.machineHeard, false);
    assert.equal(late.shell.voicemail, 'leaving');
    assert.deepEqual(late.log.signals, [{ type: 'voicemail' }]);
    assert.equal(late.log.clears, 1, 'what the far end had not played is dropped');
    assert.deepEqual(late.log.said, [['Please call back.', { kind: 'voicemail' }]]);
    late.listeners.answeredBy?.('machine');
    assert.equal(late.log.said.length, 1, 'left once');
    late.shell.leaveVoicemail();
    assert.equal(late.log.said.length, 1, 'left once, however asked');

    const awaiting = shellRig({ agent: { voicemail: { action: 'leave_message', message: 'Please call back.' } } });
    awaiting.pipeline.run();
    await settle();
    awaiting.shell.awaitMachineGreeting();
    awaiting.listeners.answeredBy?.('machine');
    assert.deepEqual([awaiting.shell.voicemail, awaiting.log.said, awaiting.log.clears], ['pending', [], 0], "a verdict while its greeting is awaited waits for the greeting's end");
  });

  it('a machine with voicemail hangup ends the call as voicemail; without a message, the default one is said', async () => {
    const hangup = shellRig({ agent: { voicemail: { action: 'hangup', message: null } } });
    const outcome = hangup.pipeline.run();
    hangup.shell.leaveVoicemail();
    const ended = await outcome;
    assert.deepEqual([ended.status, ended.endReason], ['voicemail', 'voicemail']);
    assert.equal(hangup.log.clears, 0, 'nothing was playing: nothing cleared');

    const plain = shellRig({ agent: { name: 'Ada', voicemail: { action: 'leave_message', message: null } } });
    plain.pipeline.run();
    plain.shell.awaitMachineGreeting();
    assert.equal(plain.shell.voicemail, 'pending');
    plain.shell.leaveVoicemail();
    assert.deepEqual(plain.log.said, [['Hello, this is Ada. Please call us back.', { kind: 'voicemail' }]]);
    plain.pipeline.end('api_hangup');
    plain.shell.leaveVoicemail();
    assert.equal(plain.log.said.length, 1);
  });
});
