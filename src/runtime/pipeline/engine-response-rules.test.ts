import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bistroAgent } from '../../../test/support/bistro-agent.ts';
import type { DialogueEngine, RespondInput, RespondResult } from '../../engine/types.ts';
import { FRAME_SAMPLES } from '../../platform/audio/frames.ts';
import type { MediaStream } from '../../ports/media.ts';
import type { CallMedia } from '../../ports/telephony.ts';
import type { TextToSpeech } from '../../ports/tts.ts';
import type { CallAgent } from '../call-agent.ts';
import { manualClock, recordingSpan, settle, stepTo } from '../test-helpers.ts';
import { NO_TRACE, type TraceSpan, turnTrace } from '../tracing.ts';
import { createCallPipeline, REPEAT_PROMPT } from './call-pipeline.ts';
import { engineResponse } from './engine-response.ts';
import { speechStage } from './speech.ts';

// The cascade's response stage in the real call shell and speech stage, with a scripted dialogue
// engine and a text-to-speech stub, on a clock moved by hand: the caller's entry, what the engine
// is asked (the history without the turn itself), the first token's time, a reply that fails (the
// repeat prompt, `llm_failed`), a reply overtaken by a newer turn, the actions that end or
// transfer the call, and a machine's greeting answered with the voicemail message.

type Script = (input: RespondInput, rig: { advance(ms: number): void }) => Promise<Partial<RespondResult>>;

function responseRig(script: Script, agent: Partial<CallAgent> = {}) {
  const clock = manualClock();
  const log = { asked: [] as RespondInput[], errors: [] as Array<[string, string]>, transfers: [] as string[], told: [] as Array<[string, string]>, said: [] as string[] };
  const stream: MediaStream = { onFrame: () => undefined, onMark: () => undefined, onClose: () => undefined, send: () => true, mark: () => undefined, clear: () => undefined, close: () => undefined };
  const media: CallMedia = { stream, answeredBy: 'human', transfer: async (to) => void log.transfers.push(to), hangup: async () => undefined };
  const tts: TextToSpeech = {
    async *synthesize(text) {
      log.said.push(text);
      yield new Int16Array(FRAME_SAMPLES * 2).fill(500);
    },
  };
  const engine = {
    respond: async (input: RespondInput) => {
      log.asked.push(input);
      const result = await script(input, { advance: (ms) => clock.advanceTo(clock.now() + ms) });
      return { reply: '', actions: [], ended: false, ...result };
    },
  } as unknown as DialogueEngine;
  let response!: ReturnType<typeof engineResponse>;
  let speech!: ReturnType<typeof speechStage>;
  const pipeline = createCallPipeline(
    { clock, media, agent: bistroAgent({ max_duration_seconds: 600, ...agent }), observer: { transcript: () => undefined, transfer: (to, reason) => void log.told.push([to, reason]), error: (code, message) => void log.errors.push([code, message]) } },
    (shell) => {
      speech = speechStage(shell, { tts, traceAgentTurn: () => turnTrace(NO_TRACE, 1, clock.now(), 'agent') });
      response = engineResponse(shell, speech, { engine, workspaceId: 'ws_rules', variables: { name: 'Ann' } });
      return { stages: [speech], start: () => undefined, say: (text, after) => speech.say(text, after), typed: () => undefined, busy: () => speech.current !== null };
    },
  );
  const outcome = pipeline.run();
  /** The caller's turn ending at `endMs`, traced under `call` when given. */
  const answer = (text: string, endMs: number, call: TraceSpan = NO_TRACE) => response.answer(text, { start_ms: endMs - 500, end_ms: endMs }, clock.now(), { stt_ms: 80, stt_wait_ms: 10 }, turnTrace(call, 1, 0, 'caller'));
  const playTo = (ms: number) => stepTo(clock, ms);
  return { clock, log, pipeline, outcome, answer, playTo, speech: () => speech };
}

/** A rig whose engine holds the turn "first" until `release()`, then streams a stale word and answers `late()`; any other turn at once. */
function overtakingRig(late: () => Partial<RespondResult>) {
  let release: () => void = () => undefined;
  const rig = responseRig(async (input) => {
    if (input.userText === 'first') {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      input.onReplyDelta?.('Stale words.');
      return late();
    }
    input.onReplyDelta?.('Fresh words.');
    return {};
  });
  return { rig, release: () => release() };
}

describe('the response stage', () => {
  it("records the caller's turn, asks the engine with the history before it, and says the streamed reply", async () => {
    const rig = responseRig(async (input) => {
      input.onReplyDelta?.('Sure, Ann. ');
      input.onReplyDelta?.('See you then.');
      return { reply: 'Sure, Ann. See you then.' };
    });
    rig.pipeline.shell.record({ role: 'agent', text: 'Hello.', start_ms: 0, end_ms: 400 });
    rig.pipeline.shell.record({ role: 'user', text: 'Hi.', start_ms: 500, end_ms: 600 });
    await rig.answer('A table for two.', 900);
    const [asked] = rig.log.asked;
    assert.deepEqual([asked.workspaceId, asked.userText, asked.variables, asked.agent.name], ['ws_rules', 'A table for two.', { name: 'Ann' }, 'Ada']);
    assert.deepEqual(
      asked.history,
      [
        { role: 'agent', text: 'Hello.' },
        { role: 'user', text: 'Hi.' },
      ],
      'the history without the turn itself',
    );
    assert.deepEqual(rig.pipeline.shell.transcript[2], { role: 'user', text: 'A table for two.', start_ms: 400, end_ms: 900 });
    await rig.playTo(1000);
    assert.deepEqual(rig.log.said, ['Sure, Ann.', 'See you then.']);
    assert.equal(rig.pipeline.shell.transcript.at(-1)?.text, 'Sure, Ann. See you then.');
    rig.pipeline.end('api_hangup');
  });

  it("the first token's time from the question, at least 1 ms, taken once", async () => {
    const rig = responseRig(async (input, clock) => {
      clock.advance(250);
      input.onReplyDelta?.('One. ');
      clock.advance(300);
      input.onReplyDelta?.('Two.');
      return {};
    });
    rig.clock.advanceTo(4000);
    await rig.answer('Hi.', 500);
    assert.equal(rig.speech().current?.timings?.llm_first_token_ms, 250, 'from the question, not from the clock origin');
    const instant = responseRig(async (input) => {
      input.onReplyDelta?.('Now.');
      return {};
    });
    await instant.answer('Hi.', 500);
    assert.equal(instant.speech().current?.timings?.llm_first_token_ms, 1, 'a token at once counts as 1 ms (0 means none)');
    rig.pipeline.end('api_hangup');
    instant.pipeline.end('api_hangup');
  });

  it('a reply that fails asks the caller to repeat and tells llm_failed with its message', async () => {
    const rig = responseRig(async () => {
      throw new Error('model overloaded');
    });
    await rig.answer('Hi.', 500);
    assert.deepEqual(rig.log.errors, [['llm_failed', 'model overloaded']]);
    await rig.playTo(500);
    assert.equal(rig.log.said.join(' '), "Sorry, I didn't catch that. Could you say it again?");
    assert.equal(REPEAT_PROMPT, rig.log.said.join(' '));
    rig.pipeline.end('api_hangup');
  });

  it('a reply overtaken by a newer turn, or by the end, is dropped: neither said nor failed', async () => {
    const { rig, release } = overtakingRig(() => {
      throw new Error('late failure');
    });
    const first = rig.answer('first', 500);
    await settle();
    await rig.answer('second', 700);
    release();
    await first;
    await rig.playTo(500);
    assert.deepEqual(rig.log.said, ['Fresh words.']);
    assert.deepEqual(rig.log.errors, []);
    rig.pipeline.end('api_hangup');
  });

  for (const [action, status] of [
    [{ type: 'end_call', reason: 'caller_goodbye' }, 'completed'],
    [{ type: 'transfer_call', to: '+15550100777', reason: 'wants a human' }, 'transferred'],
  ] as const) {
    it(`the engine's ${action.type} follows the reply: the call ends ${status}`, async () => {
      const rig = responseRig(async (input) => {
        input.onReplyDelta?.('Goodbye.');
        // A tool use after it is not what follows.
        return { actions: [action, { type: 'function_call', name: 'lookup', arguments: {}, result: { error: 'x' } }] };
      });
      await rig.answer('Bye.', 500);
      await rig.playTo(1000);
      const ended = await rig.outcome;
      assert.equal(ended.status, status);
      assert.equal(ended.endReason, action.type === 'end_call' ? 'caller_goodbye' : 'transferred');
      assert.deepEqual(rig.log.transfers, action.type === 'transfer_call' ? ['+15550100777'] : []);
      assert.deepEqual(rig.log.told, action.type === 'transfer_call' ? [['+15550100777', 'wants a human']] : []);
    });
  }

  it("a machine's greeting ended (voicemail pending): the message is left, the engine not asked", async () => {
    const rig = responseRig(async () => assert.fail('the engine is not asked'), { voicemail: { action: 'leave_message', message: 'Call us back.' } });
    rig.pipeline.shell.awaitMachineGreeting();
    await rig.answer('Please leave a message after the tone.', 3000);
    assert.equal(rig.pipeline.shell.voicemail, 'leaving');
    await rig.playTo(200);
    assert.deepEqual(rig.log.said, ['Call us back.']);
    assert.equal(rig.pipeline.shell.transcript[0].role, 'user');
    rig.pipeline.end('api_hangup');
  });

  it("a turn overtaken adds nothing to its trace (no first token, no tool); a failed reply's turn is marked llm_failed", async () => {
    const { rig, release } = overtakingRig(() => ({ actions: [{ type: 'function_call', name: 'lookup', arguments: {}, result: { status: 200, body: 'ok', duration_ms: 5 } }] }));
    const stale = recordingSpan();
    const first = rig.answer('first', 500, stale.span);
    await settle();
    await rig.answer('second', 700);
    release();
    await first;
    assert.deepEqual(stale.record.children[0].children, [], 'the overtaken turn traced nothing more');

    const failing = responseRig(async () => {
      throw new Error('model overloaded');
    });
    const failed = recordingSpan();
    await failing.answer('Hi.', 500, failed.span);
    assert.deepEqual(failed.record.children[0].failed, ['llm_failed']);
    rig.pipeline.end('api_hangup');
    failing.pipeline.end('api_hangup');
  });
});
