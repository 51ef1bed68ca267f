import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bistroAgent } from '../../../test/support/bistro-agent.ts';
import type { MediaStream } from '../../ports/media.ts';
import type { SpeechToText } from '../../ports/stt.ts';
import type { CallMedia } from '../../ports/telephony.ts';
import type { Heard } from '../agent-turn.ts';
import type { CallAgent } from '../call-agent.ts';
import { manualClock, recordingSpan } from '../test-helpers.ts';
import { NO_TRACE, type TraceSpan, turnTrace } from '../tracing.ts';
import { type CallSignal, createCallPipeline, REPEAT_PROMPT } from './call-pipeline.ts';
import type { CallerSpan, EngineResponse } from './engine-response.ts';
import { recognitionStage } from './recognition.ts';
import type { SpeechStage } from './speech.ts';

// The cascade's recognition stage in the real call shell, with a recogniser, a speech stage and a
// response stage stubbed, on a clock moved by hand: an utterance's words handed to the response
// with its span and timings, trimmed; nothing for an empty transcript, an ended call, a machine's
// message being left, or speech the agent talked through; a failing recogniser told, and the repeat
// prompt said when the agent is silent; an interim result cutting the agent.

interface RecognitionRigOptions {
  stt?: (audio: Int16Array) => Promise<string>;
  /** A recogniser whose requests stand alone, asked early at STT_EARLY_TRANSCRIPT_MS. */
  earlyTranscriptMs?: number;
  agent?: Partial<CallAgent>;
  /** The caller's turn's span (none unless given). */
  trace?: TraceSpan;
}

function recognitionRig(options: RecognitionRigOptions = {}) {
  const clock = manualClock();
  clock.advanceTo(10_000);
  const log = { answered: [] as Array<[string, CallerSpan, number, Heard]>, said: [] as string[], errors: [] as Array<[string, string]>, signals: [] as CallSignal[], asked: 0, requests: [] as AbortSignal[], prompts: [] as string[] };
  const stream: MediaStream = { onFrame: () => undefined, onMark: () => undefined, onClose: () => undefined, send: () => true, mark: () => undefined, clear: () => undefined, close: () => undefined };
  const media: CallMedia = { stream, answeredBy: 'human', transfer: async () => undefined, hangup: async () => undefined };
  const stt: SpeechToText = {
    stateless: options.earlyTranscriptMs !== undefined,
    transcribe: async (audio, request) => {
      log.asked++;
      if (request.signal) log.requests.push(request.signal);
      return options.stt ? options.stt(audio) : 'words';
    },
  };
  let agentTalking = false;
  const speech = {
    get current() {
      return agentTalking ? {} : null;
    },
    say: (text: string) => void log.said.push(text),
  } as unknown as SpeechStage;
  const response = { answer: async (text: string, span: CallerSpan, turnEndAt: number, heard: Heard) => void log.answered.push([text, span, turnEndAt, heard]) } as unknown as EngineResponse;
  let interim: (text: string) => void = () => undefined;
  let recognition!: ReturnType<typeof recognitionStage>;
  const pipeline = createCallPipeline(
    { clock, media, agent: bistroAgent({ max_duration_seconds: 600, ...options.agent }), observer: { transcript: () => undefined, transfer: () => undefined, error: (code, message) => void log.errors.push([code, message]) } },
    (shell) => {
      recognition = recognitionStage(shell, {
        stt,
        earlyTranscriptMs: options.earlyTranscriptMs,
        speech,
        response,
        interims: {
          onInterim: (listener) => {
            interim = listener;
          },
        },
        traceCallerTurn: (startMs) => turnTrace(options.trace ?? NO_TRACE, 1, startMs, 'caller'),
      });
      return { stages: [recognition.stage, { signal: (s) => void log.signals.push(s) }], start: () => undefined, say: (text) => void log.prompts.push(text), typed: () => undefined, busy: () => false };
    },
  );
  pipeline.run();
  const utterance = (startMs: number, endMs: number) => recognition.utterance({ audio: new Int16Array(320), startMs, endMs });
  return {
    clock,
    log,
    pipeline,
    utterance,
    /** The caller paused (the turn detector's early-transcription hook): what they said so far. */
    paused: () => recognition.pause?.onPause(new Int16Array(320)),
    interim: (text: string) => interim(text),
    setAgentTalking(value: boolean) {
      agentTalking = value;
    },
  };
}

describe('the recognition stage', () => {
  it("hands the utterance's trimmed words to the response, with its span in call time and the recogniser's timings", async () => {
    const rig = recognitionRig({
      stt: async () => {
        rig.clock.advanceTo(rig.clock.now() + 180);
        return '  a table for two  ';
      },
    });
    rig.clock.advanceTo(12_000);
    await rig.utterance(11_000, 11_600);
    assert.deepEqual(rig.log.answered, [['a table for two', { start_ms: 1000, end_ms: 1600 }, 12_000, { stt_ms: 180, stt_wait_ms: 180 }]]);
  });

  it('an empty transcript is no turn; the silence it broke counts again, unless the agent talks or a machine is answered', async () => {
    const rig = recognitionRig({ stt: async () => '   ', agent: { silence_timeout_seconds: 5 } });
    rig.pipeline.shell.callerActive();
    await rig.utterance(10_000, 10_400);
    assert.deepEqual(rig.log.answered, []);
    assert.deepEqual(rig.log.said, []);
    rig.clock.advanceTo(15_000);
    assert.deepEqual(rig.log.prompts, ['Are you still there?'], 'a cough does not hold the call open');

    for (const [talking, machine] of [
      [true, false],
      [false, true],
    ] as const) {
      const other = recognitionRig({ stt: async () => '', agent: { silence_timeout_seconds: 5 } });
      other.setAgentTalking(talking);
      if (machine) other.pipeline.shell.awaitMachineGreeting();
      await other.utterance(10_000, 10_400);
      other.clock.advanceTo(20_000);
      assert.deepEqual(other.log.prompts, [], JSON.stringify({ talking, machine }));
    }
  });

  it('no turn, and no recogniser asked, for speech the agent talked through, while a message is left, or after the end', async () => {
    const rig = recognitionRig();
    rig.setAgentTalking(true);
    await rig.utterance(10_000, 10_200);
    assert.equal(rig.log.asked, 0, 'a cough under the agent');
    rig.pipeline.shell.awaitMachineGreeting();
    await rig.utterance(10_000, 10_200);
    assert.equal(rig.log.asked, 1, "a machine's greeting is heard though the agent talks");
    rig.setAgentTalking(false);
    rig.pipeline.shell.leaveVoicemail();
    await rig.utterance(10_000, 10_200);
    assert.equal(rig.log.asked, 1, 'not while the message is left');
    const ended = recognitionRig();
    ended.pipeline.end('api_hangup');
    await ended.utterance(10_000, 10_200);
    assert.equal(ended.log.asked, 0);
  });

  it('a failing recogniser is told as stt_failed and the caller asked to repeat; not when the agent talks or the call ended', async () => {
    const failing = async () => {
      throw new Error('recogniser down');
    };
    const rig = recognitionRig({ stt: failing });
    await rig.utterance(10_000, 10_300);
    assert.deepEqual(rig.log.errors, [['stt_failed', 'recogniser down']]);
    assert.deepEqual(rig.log.said, [REPEAT_PROMPT]);
    assert.deepEqual(rig.log.answered, []);

    const talking = recognitionRig({ stt: failing });
    talking.pipeline.shell.awaitMachineGreeting();
    talking.setAgentTalking(true);
    await talking.utterance(10_000, 10_300);
    assert.deepEqual(talking.log.errors, [['stt_failed', 'recogniser down']]);
    assert.deepEqual(talking.log.said, [], 'the agent is talking: no prompt over it');

    let fail: (error: Error) => void = () => undefined;
    const late = recognitionRig({
      stt: () =>
        new Promise<string>((_, reject) => {
          fail = reject;
        }),
    });
    const turn = late.utterance(10_000, 10_300);
    await new Promise((resolve) => setImmediate(resolve));
    late.pipeline.end('api_hangup');
    fail(new Error('too late'));
    await turn;
    assert.deepEqual([late.log.errors, late.log.said], [[], []]);
  });

  it('a non-blank interim result while the agent talks cuts it; a blank one, or one while the agent is silent, does not', () => {
    const rig = recognitionRig();
    rig.interim('hello');
    rig.setAgentTalking(true);
    rig.interim('   ');
    assert.deepEqual(rig.log.signals, []);
    rig.interim('wait');
    assert.deepEqual(rig.log.signals, [{ type: 'barge_in' }]);
  });

  it('the early request goes out at a pause only when the words can be a turn: the agent silent, or a machine greeting awaited', () => {
    const rig = recognitionRig({ earlyTranscriptMs: 200, agent: { turn_end_silence_ms: 800 } });
    rig.paused();
    assert.equal(rig.log.asked, 1, 'the agent is silent');
    rig.setAgentTalking(true);
    rig.paused();
    assert.equal(rig.log.asked, 1, 'words under the agent are no turn');
    rig.pipeline.shell.awaitMachineGreeting();
    rig.paused();
    assert.equal(rig.log.asked, 2, "a machine's greeting is heard though the agent talks");
  });

  it('the end cancels the early request in flight; a barge-in does not', () => {
    const rig = recognitionRig({ stt: () => new Promise<string>(() => undefined), earlyTranscriptMs: 200, agent: { turn_end_silence_ms: 800 } });
    rig.paused();
    rig.pipeline.shell.signal({ type: 'barge_in' });
    assert.deepEqual(rig.log.requests.map((r) => r.aborted), [false]);
    rig.pipeline.end('api_hangup');
    assert.deepEqual(rig.log.requests.map((r) => r.aborted), [true]);
  });

  it('no turn while the message is left, even between its sentences', async () => {
    const rig = recognitionRig({ agent: { voicemail: { action: 'leave_message', message: 'Please call back.' } } });
    rig.pipeline.shell.leaveVoicemail();
    assert.equal(rig.pipeline.ended, false);
    await rig.utterance(10_000, 10_200);
    assert.deepEqual([rig.log.asked, rig.log.answered.length], [0, 0]);
  });

  it("the caller's turn is traced: the detector's end of turn, the recogniser's stage, a failure", async () => {
    const { span, record } = recordingSpan();
    const rig = recognitionRig({
      trace: span,
      stt: async () => {
        rig.clock.advanceTo(rig.clock.now() + 150);
        return 'a table';
      },
    });
    rig.clock.advanceTo(10_500);
    await rig.utterance(10_000, 10_300);
    const [turn] = record.children;
    assert.deepEqual(
      turn.children.map((c) => [c.name, c.start, c.attributes, c.ends]),
      [
        ['vad.end_of_turn', 10_300, { duration_ms: 200 }, [10_500]],
        ['stt', 10_500, { stt_ms: 150, empty: false, duration_ms: 150 }, [10_650]],
      ],
    );

    const failed = recordingSpan();
    const down = recognitionRig({
      trace: failed.span,
      stt: async () => {
        throw new Error('down');
      },
    });
    await down.utterance(10_000, 10_300);
    assert.deepEqual([failed.record.children[0].failed, failed.record.children[0].ends], [['stt_failed'], [10_000]]);
  });
});
