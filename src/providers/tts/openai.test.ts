import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startFakeSpeechServer } from './fake-server.ts';
import { encodeMp3 } from './mp3.ts';
import { createOpenAiTts, OPENAI_PCM_SAMPLE_RATE } from './openai.ts';
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
});
