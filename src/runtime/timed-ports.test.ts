import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { setTimeout as wallDelay } from 'node:timers/promises';
import type { DialogueEngine } from '../engine/types.ts';
import { beating } from './test-helpers.ts';
import { type SessionPorts, sleep, timedPorts } from './timed-ports.ts';
import { createVirtualClock } from './virtual-clock.ts';

// The ports as a sandbox call's clock sees them: the platform's work (recognition, synthesis, the
// engine) is held, so it costs the call no time however long it takes on the wall; a simulated
// latency is a wait on the clock, placed where the provider's would be (after the recogniser
// answered, before the first audio, before the model's first token), and a barge-in cuts it short.

const max = () => createVirtualClock({ speed: Number.POSITIVE_INFINITY });

function fakePorts(log: string[]): SessionPorts {
  return {
    stt: {
      stateless: true,
      async transcribe(audio) {
        await wallDelay(15);
        return `${audio.length} samples`;
      },
    },
    tts: {
      async *synthesize(text) {
        try {
          for (const word of text.split(' ')) {
            await wallDelay(5);
            yield Int16Array.from([word.length]);
          }
        } finally {
          log.push('tts closed');
        }
      },
    },
    engine: {
      greet: (_agent, variables) => ({ role: 'agent', text: `hello ${variables.name}`, at: 0 }) as never,
      extract: async () => ({ city: 'Lyon' }),
      toolsFor: () => ({ specs: [], instructions: 'none' }) as never,
      async respond(input) {
        await wallDelay(10);
        return { reply: `you said ${input.userText}`, actions: [], ended: false };
      },
    } as DialogueEngine,
  };
}

describe('sleep', () => {
  it('waits its time on the clock; no time or less resolves at once, unless the signal is already aborted', async () => {
    const clock = max();
    await sleep(clock, 250);
    assert.equal(clock.now(), 250);
    await sleep(clock, 0);
    await sleep(clock, -5);
    assert.equal(clock.now(), 250);
    const aborted = AbortSignal.abort(new Error('barge-in'));
    await assert.rejects(sleep(clock, 0, aborted), /barge-in/);
    await assert.rejects(sleep(clock, 100, aborted), /barge-in/);
    await sleep(clock, 10);
    assert.equal(clock.now(), 260, 'the aborted sleeps armed no timer that moved time');
  });

  it('no time resolves at once even while other work is held (a timer would wait for the hold)', async () => {
    const clock = max();
    let release = () => {};
    const work = clock.hold(new Promise<void>((resolve) => (release = resolve)));
    const first = await Promise.race([sleep(clock, 0).then(() => 'slept'), wallDelay(2000).then(() => 'still waiting')]);
    release();
    await work;
    assert.equal(first, 'slept');
  });

  it('rejects with the reason when aborted on the way, and leaves no listener once it resolved', async () => {
    const clock = max();
    const controller = new AbortController();
    const cut = sleep(clock, 1000, controller.signal);
    await wallDelay(1);
    controller.abort(new Error('barge-in'));
    await assert.rejects(cut, /barge-in/);
    const later = new AbortController();
    await sleep(clock, 50, later.signal);
    assert.equal(getEventListeners(later.signal, 'abort').length, 0);
  });
});

describe('timedPorts', () => {
  it("recognition: held, then the simulated latency after the recogniser's answer; stateless kept", async () => {
    const clock = max();
    const ports = timedPorts(clock, fakePorts([]), { stt_ms: 120 });
    assert.equal(ports.stt.stateless, true);
    const text = await ports.stt.transcribe(new Int16Array(320), { language: 'en' });
    assert.deepEqual([text, clock.now()], ['320 samples', 120]);
    // At speed 1 the 5 s latency waits on the wall: a barge-in 50 ms in cuts it.
    const slow = timedPorts(createVirtualClock({ speed: 1 }), fakePorts([]), { stt_ms: 5000 });
    const controller = new AbortController();
    const cut = slow.stt.transcribe(new Int16Array(1), { language: 'en', signal: controller.signal });
    await wallDelay(50);
    controller.abort(new Error('barge-in'));
    await assert.rejects(cut, /barge-in/);
  });

  it('synthesis: the first-audio latency before the first chunk, chunks held, the source closed when the reader stops', async () => {
    const clock = max();
    const log: string[] = [];
    const ports = timedPorts(clock, fakePorts(log), { tts_first_audio_ms: 80 });
    const chunks: Array<[number, number]> = [];
    for await (const chunk of ports.tts.synthesize('one three five', 'builtin-ben')) chunks.push([chunk[0], clock.now()]);
    assert.deepEqual(chunks, [
      [3, 80],
      [5, 80],
      [4, 80],
    ]);
    assert.deepEqual(log, ['tts closed']);
    for await (const chunk of ports.tts.synthesize('stop here please', 'builtin-ben')) {
      assert.equal(chunk[0], 4);
      break;
    }
    assert.deepEqual(log, ['tts closed', 'tts closed'], 'the source closed after the first chunk');
    assert.equal(clock.now(), 160);
    // A source whose iterator has no return(): read to its end all the same.
    const bare = timedPorts(clock, { ...fakePorts(log), tts: { synthesize: () => ({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true as const, value: undefined }) }) }) } });
    const none: Int16Array[] = [];
    for await (const chunk of bare.tts.synthesize('x', 'v')) none.push(chunk);
    assert.deepEqual(none, []);
  });

  it("the engine: its first-token latency before the reply, which is held; greet, extract and tools as they are", async () => {
    const clock = max();
    const inner = fakePorts([]);
    const ports = timedPorts(clock, inner, { llm_first_token_ms: 300 });
    const reply = await ports.engine.respond({ userText: 'hi', history: [], variables: {}, workspaceId: 'w', agent: {} as never });
    assert.deepEqual([reply.reply, clock.now()], ['you said hi', 300]);
    assert.deepEqual(ports.engine.greet({} as never, { name: 'Ada' }), inner.engine.greet({} as never, { name: 'Ada' }));
    assert.deepEqual(await ports.engine.extract({} as never, []), { city: 'Lyon' });
    assert.deepEqual(ports.engine.toolsFor({ workspaceId: 'w', agent: {} as never, variables: {}, now: new Date() }), { specs: [], instructions: 'none' });
    const controller = new AbortController();
    controller.abort(new Error('barge-in'));
    await assert.rejects(ports.engine.respond({ userText: 'x', history: [], variables: {}, workspaceId: 'w', agent: {} as never, signal: controller.signal }), /barge-in/);
  });

  it('no latency given: the work costs the call no time, though the call beats beside it', async () => {
    const clock = max();
    const stop = beating(clock);
    const ports = timedPorts(clock, fakePorts([]));
    await ports.stt.transcribe(new Int16Array(2), { language: 'en' });
    assert.equal(clock.now(), 0, 'recognition held');
    for await (const _ of ports.tts.synthesize('a b', 'v'));
    assert.equal(clock.now(), 0, 'synthesis held');
    await ports.engine.respond({ userText: 'x', history: [], variables: {}, workspaceId: 'w', agent: {} as never });
    assert.equal(clock.now(), 0, 'the reply held');
    stop();
  });
});
