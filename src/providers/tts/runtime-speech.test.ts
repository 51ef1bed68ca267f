import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { AppError } from '../../platform/errors.ts';
import { createCpuPool, cpuTask } from '../../platform/cpu-pool.ts';
import type * as poolTasks from '../../platform/cpu-pool.test-tasks.ts';
import { holdersStarted, newGate, openGate } from '../../platform/cpu-pool.test-tasks.ts';
import { SAMPLE_RATE } from '../../platform/audio/frames.ts';
import { createBuiltinTts } from './builtin.ts';
import { FAKE_SPEECH_SAMPLES_PER_CHAR, startFakeSpeechServer } from '../../../test/fakes/openai/tts.ts';
import { createTtsRegistry } from './index.ts';
import { createOpenAiTts } from './openai.ts';
import { createRuntimeSpeech } from './runtime-speech.ts';

// The runtime's TextToSpeech over a streaming provider (the real openai SDK against the fake
// server sending its PCM in pieces): audio plays before the provider has sent it all.

const CHUNKS = 6;
const LINE = 'Thanks for waiting, your table for four is ready now.';
/** The fake's 24 kHz samples for `text`, at the runtime's 16 kHz. */
const expectedSamples = (text: string) => (Math.round(FAKE_SPEECH_SAMPLES_PER_CHAR * text.length) * SAMPLE_RATE) / 24_000;

const total = (chunks: Int16Array[]) => chunks.reduce((n, c) => n + c.length, 0);

describe('runtime speech over a streaming provider', async () => {
  const fake = await startFakeSpeechServer({ stream: { chunks: CHUNKS, delayMs: 60 } });
  after(() => fake.close());
  const registry = createTtsRegistry([createBuiltinTts(), createOpenAiTts({ baseUrl: fake.baseUrl, model: 'tts-1', voices: ['alloy'] })]);

  it('plays the first audio before the provider has sent the last piece, all of it resampled to 16 kHz', async () => {
    const speech = createRuntimeSpeech(registry);
    const chunks: Int16Array[] = [];
    let sentAtFirstChunk = -1;
    for await (const pcm of speech.synthesize(LINE, 'openai-alloy')) {
      if (chunks.length === 0) sentAtFirstChunk = fake.streams.at(-1)!.sent;
      chunks.push(pcm);
    }
    const stream = fake.streams.at(-1)!;
    assert.equal(stream.chunks, CHUNKS);
    assert.ok(sentAtFirstChunk >= 1 && sentAtFirstChunk < CHUNKS, `first audio after ${sentAtFirstChunk} of ${CHUNKS} pieces`);
    assert.ok(chunks.length > 1, `${chunks.length} chunks`);
    // The resampler keeps a few milliseconds of filter delay; the rest is all there.
    const expected = expectedSamples(LINE);
    assert.ok(Math.abs(total(chunks) - expected) < 0.01 * expected, `${total(chunks)} samples for ${expected}`);
    assert.ok(chunks.some((c) => c.some((s) => Math.abs(s) > 4000)));
  });

  it('speaks a line again from the cache, whole, without asking the provider', async () => {
    const speech = createRuntimeSpeech(registry);
    const first: Int16Array[] = [];
    for await (const pcm of speech.synthesize('Hello again.', 'openai-alloy')) first.push(pcm);
    const requests = fake.requests.length;
    const again: Int16Array[] = [];
    for await (const pcm of speech.synthesize('Hello again.', 'openai-alloy')) again.push(pcm);
    assert.equal(fake.requests.length, requests);
    assert.equal(again.length, 1);
    assert.deepEqual(again[0], Int16Array.from(first.flatMap((c) => [...c])));
  });

  it('a line asked for while it is being streamed waits for it and gets it whole', async () => {
    const speech = createRuntimeSpeech(registry);
    const requests = fake.requests.length;
    const collect = async () => {
      const chunks: Int16Array[] = [];
      for await (const pcm of speech.synthesize('Both of us.', 'openai-alloy')) chunks.push(pcm);
      return chunks;
    };
    const [streamed, waited] = await Promise.all([collect(), collect()]);
    assert.equal(fake.requests.length, requests + 1);
    assert.equal(waited.length, 1);
    assert.deepEqual(waited[0], Int16Array.from(streamed.flatMap((c) => [...c])));
  });

  it('stops at an abort: no more audio, the request closed, nothing cached', async () => {
    const speech = createRuntimeSpeech(registry);
    const controller = new AbortController();
    const chunks: Int16Array[] = [];
    for await (const pcm of speech.synthesize(LINE, 'openai-alloy', { signal: controller.signal })) {
      chunks.push(pcm);
      controller.abort();
    }
    assert.equal(chunks.length, 1);
    const stream = fake.streams.at(-1)!;
    assert.equal(await stream.closed, 'aborted');
    assert.ok(stream.sent < stream.chunks);
    // Not cached: spoken again, in full, from the provider.
    const requests = fake.requests.length;
    const again: Int16Array[] = [];
    for await (const pcm of speech.synthesize(LINE, 'openai-alloy')) again.push(pcm);
    assert.equal(fake.requests.length, requests + 1);
    assert.ok(Math.abs(total(again) - expectedSamples(LINE)) < 0.01 * expectedSamples(LINE));
  });

  it('a line waiting on a stream that is aborted speaks it itself', async () => {
    const speech = createRuntimeSpeech(registry);
    const controller = new AbortController();
    const aborted = (async () => {
      for await (const _pcm of speech.synthesize('Wait for me.', 'openai-alloy', { signal: controller.signal })) controller.abort();
    })();
    const waiting: Int16Array[] = [];
    for await (const pcm of speech.synthesize('Wait for me.', 'openai-alloy')) waiting.push(pcm);
    await aborted;
    assert.ok(Math.abs(total(waiting) - expectedSamples('Wait for me.')) < 0.01 * expectedSamples('Wait for me.'), `${total(waiting)} samples`);
  });

  it('streams lines too long to cache as well', async () => {
    const speech = createRuntimeSpeech(registry, { maxCachedText: 10 });
    let pieces = 0;
    for await (const _pcm of speech.synthesize(LINE, 'openai-alloy')) pieces++;
    assert.ok(pieces > 1);
  });

  it('still gives a provider without streaming (the built-in voices) as one chunk', async () => {
    const speech = createRuntimeSpeech(registry);
    const chunks: Int16Array[] = [];
    for await (const pcm of speech.synthesize('Hello.', 'builtin-ava')) chunks.push(pcm);
    assert.equal(chunks.length, 1);
    assert.deepEqual(chunks[0], (await createBuiltinTts().synthesize('Hello.', 'builtin-ava')).pcm);
  });
});

describe('runtime speech through a busy CPU pool', () => {
  it("waits for a full pool (a live call's lane) where a request's synthesis is refused", async (ctx) => {
    const cpu = createCpuPool({ threads: 1, queue: 0 });
    ctx.after(() => cpu.close());
    const builtin = createBuiltinTts({ cpu });
    const speech = createRuntimeSpeech(createTtsRegistry([builtin]));
    const gate = newGate();
    const holder = cpu.run(cpuTask<typeof poolTasks.hold>(new URL('../../platform/cpu-pool.test-tasks.ts', import.meta.url), 'hold'), { gate });
    while (holdersStarted(gate) < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    await assert.rejects(builtin.synthesize('Busy?', 'builtin-ava'), (error: unknown) => error instanceof AppError && error.code === 'service_unavailable');
    const chunks: Int16Array[] = [];
    const spoken = (async () => {
      for await (const pcm of speech.synthesize('Still here.', 'builtin-ava')) chunks.push(pcm);
    })();
    assert.equal(cpu.pending, 2, 'the live synthesis waits for the thread');
    openGate(gate);
    await Promise.all([holder, spoken]);
    assert.equal(chunks.length, 1);
    assert.deepEqual(chunks[0], (await createBuiltinTts().synthesize('Still here.', 'builtin-ava')).pcm);
  });
});
