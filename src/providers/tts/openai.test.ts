import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { FAKE_SPEECH_SAMPLES_PER_CHAR, fakeSpeechPcm, startFakeSpeechServer } from '../../../test/fakes/openai/tts.ts';
import { encodeMp3 } from '../../platform/audio/mp3.ts';
import { createOpenAiTts, createPcm16Decoder, OPENAI_PCM_SAMPLE_RATE } from './openai.ts';
import type { SynthesizedAudio } from '../../ports/tts.ts';
import { createTtsRegistry } from './index.ts';
import { createBuiltinTts } from './builtin.ts';

describe('OpenAI-compatible TTS adapter', async () => {
  const fake = await startFakeSpeechServer({ apiKey: 'sk-test' });
  after(() => fake.close());

  it('lists openai- voices and speaks through /audio/speech as 24 kHz PCM', async () => {
    const tts = createOpenAiTts({ baseUrl: fake.baseUrl, apiKey: 'sk-test', model: 'tts-1', voices: ['alloy', 'nova'] });
    assert.deepEqual(tts.voices().map((v) => v.id), ['openai-alloy', 'openai-nova']);
    const audio = await tts.synthesize('Hello there', 'openai-nova');
    assert.equal(audio.sampleRate, OPENAI_PCM_SAMPLE_RATE);
    assert.equal(audio.pcm.length, Math.round(24_000 * 0.06 * 'Hello there'.length));
    assert.ok(audio.pcm.some((s) => Math.abs(s) > 4000));
    const sent = fake.requests.at(-1);
    assert.equal(sent?.authorization, 'Bearer sk-test');
    assert.deepEqual(sent?.body, { model: 'tts-1', voice: 'nova', input: 'Hello there', response_format: 'pcm' });
    const mp3 = await encodeMp3(audio.pcm, audio.sampleRate);
    assert.equal(mp3[0], 0xff);
  });

  it('fails clearly on a wrong key or an unknown voice', async () => {
    const wrong = createOpenAiTts({ baseUrl: fake.baseUrl, apiKey: 'sk-wrong', model: 'tts-1' });
    await assert.rejects(wrong.synthesize('Hi', 'openai-alloy'), /401|Incorrect API key/);
    await assert.rejects(wrong.synthesize('Hi', 'builtin-ava'), /no voice/);
  });

  it('sits beside the built-in voices in the registry, each voice finding its provider', () => {
    const registry = createTtsRegistry([createBuiltinTts(), createOpenAiTts({ baseUrl: fake.baseUrl, model: 'tts-1', voices: ['alloy'] })]);
    assert.equal(registry.providerOf('openai-alloy')?.name, 'openai');
    assert.equal(registry.providerOf('builtin-ava')?.name, 'builtin');
    assert.equal(registry.findVoice('openai-alloy')?.provider, 'openai');
    assert.equal(registry.findVoice('nobody'), undefined);
  });

  it('describes the registry: the built-in engine and which providers stream', async () => {
    const registry = createTtsRegistry([createBuiltinTts(), createOpenAiTts({ baseUrl: fake.baseUrl, model: 'tts-1', voices: ['alloy'] })]);
    assert.deepEqual(await registry.describe(), {
      builtin_engine: 'formant',
      providers: [
        { name: 'builtin', voices: 8, streaming: false },
        { name: 'openai', voices: 1, streaming: true },
      ],
    });
  });
});

describe('OpenAI-compatible TTS adapter, streamed', async () => {
  const fake = await startFakeSpeechServer({ stream: { chunks: 5, delayMs: 30 } });
  after(() => fake.close());
  const tts = createOpenAiTts({ baseUrl: fake.baseUrl, model: 'tts-1', voices: ['alloy'] });
  const text = 'Streamed as it is synthesised.';

  it('yields the PCM piece by piece, the same samples as the whole body, odd bytes kept across pieces', async () => {
    const pieces: SynthesizedAudio[] = [];
    for await (const audio of tts.stream!(text, 'openai-alloy')) pieces.push(audio);
    assert.ok(pieces.length >= 3, `${pieces.length} pieces`);
    assert.ok(pieces.every((p) => p.sampleRate === OPENAI_PCM_SAMPLE_RATE));
    const joined = Int16Array.from(pieces.flatMap((p) => [...p.pcm]));
    assert.equal(joined.length, Math.round(FAKE_SPEECH_SAMPLES_PER_CHAR * text.length));
    assert.deepEqual(joined, (await tts.synthesize(text, 'openai-alloy')).pcm);
    assert.equal(await fake.streams[0].closed, 'finished');
  });

  it('stops at an abort, closing the connection', async () => {
    const controller = new AbortController();
    let pieces = 0;
    for await (const _audio of tts.stream!(text, 'openai-alloy', controller.signal)) {
      pieces++;
      controller.abort();
    }
    assert.equal(pieces, 1);
    const stream = fake.streams.at(-1)!;
    assert.equal(await stream.closed, 'aborted');
    assert.ok(stream.sent < stream.chunks);
  });

  it('fails on an unknown voice', async () => {
    await assert.rejects(async () => {
      for await (const _audio of tts.stream!(text, 'openai-nobody'));
    }, /no voice/);
  });
});

describe('PCM16 decoder', () => {
  it('keeps a sample split between pieces, any way the bytes are cut', () => {
    const bytes = new Uint8Array(fakeSpeechPcm('abc'));
    const expected = createPcm16Decoder().decode(bytes);
    for (const cut of [1, 2, 3, 7]) {
      const decoder = createPcm16Decoder();
      const parts: number[] = [];
      for (let at = 0; at < bytes.length; at += cut) parts.push(...decoder.decode(bytes.subarray(at, at + cut)));
      parts.push(...decoder.decode(new Uint8Array(0)));
      assert.deepEqual(Int16Array.from(parts), expected, `pieces of ${cut} bytes`);
    }
    assert.ok(expected.some((s) => s < -4000));
  });
});
