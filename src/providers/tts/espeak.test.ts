import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sampleSentence } from '../../modules/catalog/sample-sentence.ts';
import { BUILTIN_SAMPLE_RATE, BUILTIN_VOICES, createBuiltinTts } from './builtin.ts';
import { createEspeakSpeech, ESPEAK_VOICES } from './espeak.ts';
import { createTtsRegistry, createTtsRegistryFromConfig } from './index.ts';

// The built-in voices through the real espeak-ng program (installed on CI by .ci/run), and the
// fall-back to the formant synthesiser when it is missing or fails.

const MISSING = '/nonexistent/espeak-ng';
const seconds = (pcm: Int16Array) => pcm.length / BUILTIN_SAMPLE_RATE;
const rms = (pcm: Int16Array) => Math.sqrt(pcm.reduce((sum, s) => sum + s * s, 0) / Math.max(1, pcm.length));

/** Median pitch (Hz) of the loud 40 ms frames, by autocorrelation over 70..400 Hz. */
function medianPitch(pcm: Int16Array): number {
  const frame = 640;
  const threshold = rms(pcm);
  const pitches: number[] = [];
  for (let start = 0; start + frame * 2 <= pcm.length; start += frame) {
    if (rms(pcm.subarray(start, start + frame)) < threshold) continue;
    let bestLag = 0;
    let best = 0;
    for (let lag = Math.floor(BUILTIN_SAMPLE_RATE / 400); lag <= BUILTIN_SAMPLE_RATE / 70; lag++) {
      let sum = 0;
      for (let i = 0; i < frame; i++) sum += pcm[start + i] * pcm[start + i + lag];
      if (sum > best) [best, bestLag] = [sum, lag];
    }
    if (bestLag > 0) pitches.push(BUILTIN_SAMPLE_RATE / bestLag);
  }
  pitches.sort((a, b) => a - b);
  return pitches[Math.floor(pitches.length / 2)] ?? 0;
}

describe('built-in voices through espeak-ng', () => {
  const espeak = createEspeakSpeech();
  const tts = createBuiltinTts({ espeak });

  it('finds the program and reports it as the engine', async () => {
    assert.match((await espeak.detect()) ?? '', /eSpeak NG/);
    assert.equal(await tts.engine(), 'espeak-ng');
    const described = await createTtsRegistry([tts]).describe();
    assert.deepEqual(described, { builtin_engine: 'espeak-ng', providers: [{ name: 'builtin', voices: BUILTIN_VOICES.length, streaming: false }] });
    assert.equal((await createTtsRegistryFromConfig({ tts: {} }).describe()).builtin_engine, 'espeak-ng');
    assert.equal((await createTtsRegistryFromConfig({ tts: { builtinEngine: 'formant' } }).describe()).builtin_engine, 'formant');
  });

  it('speaks a sentence as audible 16 kHz speech of a plausible length', async () => {
    const audio = await tts.synthesize('Hello, thanks for calling. How can I help you?', 'builtin-ava');
    assert.equal(audio.sampleRate, BUILTIN_SAMPLE_RATE);
    assert.ok(audio.pcm instanceof Int16Array);
    assert.ok(seconds(audio.pcm) > 1 && seconds(audio.pcm) < 4, `${seconds(audio.pcm)} s`);
    assert.ok(rms(audio.pcm) > 500, `rms ${rms(audio.pcm)}`);
    // Not the formant synthesiser's output.
    assert.notDeepEqual(audio.pcm, (await createBuiltinTts().synthesize('Hello, thanks for calling. How can I help you?', 'builtin-ava')).pcm);
    assert.equal(espeak.running, 0);
  });

  it('maps every built-in voice to an installed espeak-ng voice of its language', async () => {
    const voices = createBuiltinTts().voices();
    assert.deepEqual(Object.keys(ESPEAK_VOICES).sort(), voices.map((v) => v.id).sort());
    for (const voice of voices) {
      assert.ok(ESPEAK_VOICES[voice.id].voice.startsWith(voice.language.split('-')[0].toLowerCase()), voice.id);
      // Straight through espeak-ng, without the fall-back: an unknown language would fail here.
      const audio = await espeak.synthesize(sampleSentence(voice.language), voice.id);
      assert.ok(seconds(audio.pcm) > 1.5 && seconds(audio.pcm) < 8, `${voice.id}: ${seconds(audio.pcm)} s`);
    }
  });

  it('speaks differently per voice: female voices higher, neutral between, slower voices longer', async () => {
    const text = 'Good morning, this is the front desk. Your table is ready now.';
    const ids = BUILTIN_VOICES.map((v) => v.id);
    const spoken = new Map(await Promise.all(ids.map(async (id) => [id, (await tts.synthesize(text, id)).pcm] as const)));
    const pitch = new Map(ids.map((id) => [id, medianPitch(spoken.get(id)!)]));
    const report = JSON.stringify(Object.fromEntries([...pitch].map(([id, hz]) => [id, Math.round(hz)])));
    const highestMale = Math.max(...BUILTIN_VOICES.filter((v) => v.gender === 'male').map((v) => pitch.get(v.id)!));
    const lowestFemale = Math.min(...BUILTIN_VOICES.filter((v) => v.gender === 'female').map((v) => pitch.get(v.id)!));
    assert.ok(lowestFemale > highestMale * 1.3, report);
    assert.ok(pitch.get('builtin-sam')! > highestMale && pitch.get('builtin-sam')! < lowestFemale, report);
    assert.ok(spoken.get('builtin-ben')!.length > spoken.get('builtin-cora')!.length, 'Ben speaks slower than Cora');
  });

  it('speaks text that looks like options, quotes and several lines, never interpreting it', async () => {
    // Were `--version` read as an option, the output would be a version line, not a WAV.
    const dashes = await espeak.synthesize('--version -v xx -w /tmp/out.wav', 'builtin-ben');
    assert.ok(seconds(dashes.pcm) > 1, `${seconds(dashes.pcm)} s`);
    const oneLine = await espeak.synthesize('She said "hello" and left.', 'builtin-ben');
    const twoLines = await espeak.synthesize('She said "hello" and left.\n\'Then\' she came back; $HOME `ls` <b>bold</b>.', 'builtin-ben');
    assert.ok(rms(oneLine.pcm) > 500);
    assert.ok(seconds(twoLines.pcm) > seconds(oneLine.pcm) + 1, `${seconds(oneLine.pcm)} s, then ${seconds(twoLines.pcm)} s`);
  });

  it('kills a run at its time-out', async () => {
    const slow = createEspeakSpeech({ timeoutMs: 50, maxOutputBytes: 1024 * 1024 * 1024 });
    const long = 'This sentence is spoken again and again until the time-out stops it. '.repeat(400);
    await assert.rejects(slow.synthesize(long, 'builtin-ava'), /timed out after 50 ms/);
    assert.equal(slow.running, 0);
  });

  it('stops a run that writes more than its output cap, and the built-in voice falls back to the formant synthesiser', async () => {
    const capped = createEspeakSpeech({ maxOutputBytes: 4096 });
    await assert.rejects(capped.synthesize('A sentence longer than four kilobytes of audio.', 'builtin-ava'), /more than 4096 bytes/);
    assert.equal(capped.running, 0);
    const errors: Error[] = [];
    const builtin = createBuiltinTts({ espeak: capped, onEspeakError: (error) => errors.push(error) });
    const audio = await builtin.synthesize('Hello there.', 'builtin-ava');
    assert.deepEqual(audio, await createBuiltinTts().synthesize('Hello there.', 'builtin-ava'));
    assert.equal(errors.length, 1);
  });

  it('runs at most maxProcesses programs at once', async () => {
    const one = createEspeakSpeech({ maxProcesses: 1 });
    let most = 0;
    let done = false;
    const all = Promise.all(['builtin-ava', 'builtin-ben', 'builtin-cora'].map((id) => one.synthesize('One at a time, please.', id))).finally(() => {
      done = true;
    });
    while (!done) {
      most = Math.max(most, one.running);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const results = await all;
    assert.equal(most, 1);
    assert.ok(results.every((audio) => audio.pcm.length > 0));
  });
});

describe('built-in voices without espeak-ng', () => {
  it('fall back to the formant synthesiser and say so', async () => {
    const missing = createEspeakSpeech({ program: MISSING });
    assert.equal(await missing.detect(), undefined);
    const tts = createBuiltinTts({ espeak: missing });
    assert.equal(await tts.engine(), 'formant');
    const audio = await tts.synthesize('Hello there.', 'builtin-ben');
    assert.deepEqual(audio, await createBuiltinTts().synthesize('Hello there.', 'builtin-ben'));
    const registry = createTtsRegistryFromConfig({ tts: {} }, { espeak: { program: MISSING } });
    assert.equal((await registry.describe()).builtin_engine, 'formant');
    assert.equal(await createBuiltinTts().engine(), 'formant');
  });

  it('a program that is not espeak-ng is not taken for it', async () => {
    assert.equal(await createEspeakSpeech({ program: 'false' }).detect(), undefined);
    assert.equal(await createEspeakSpeech({ program: 'echo' }).detect(), undefined);
  });
});
