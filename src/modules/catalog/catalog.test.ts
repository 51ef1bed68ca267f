import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { createApiKey, signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { createCpuPool, cpuTask } from '../../platform/cpu-pool.ts';
import type * as poolTasks from '../../platform/cpu-pool.test-tasks.ts';
import { newGate, openGate } from '../../platform/cpu-pool.test-tasks.ts';
import { BUILTIN_SAMPLE_RATE, createBuiltinTts } from '../../providers/tts/builtin.ts';
import { createEspeakSpeech } from '../../providers/tts/espeak.ts';
import { startFakeSpeechServer } from '../../../test/fakes/openai/tts.ts';

/** True when `bytes` starts with an MPEG audio frame header (11-bit 0x7FF sync, layer III). */
function isMp3Frame(bytes: Buffer): boolean {
  return bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0 && ((bytes[1] >> 1) & 0x03) === 0x01;
}

/**
 * Walks an MP3 frame by frame: every header must be MPEG-2 layer III, 16 kHz, 32 kbit/s (what the
 * built-in voices give), and the frames must tile the file exactly. Answers the frame count.
 */
function mpeg2Frames(bytes: Buffer): number {
  let offset = 0;
  let frames = 0;
  while (offset < bytes.length) {
    assert.ok(offset + 4 <= bytes.length, `a partial frame header at byte ${offset}`);
    const [b0, b1, b2] = [bytes[offset], bytes[offset + 1], bytes[offset + 2]];
    assert.ok(b0 === 0xff && (b1 & 0xe0) === 0xe0, `no frame sync at byte ${offset}`);
    assert.equal((b1 >> 3) & 0x03, 0b10, 'MPEG-2');
    assert.equal((b1 >> 1) & 0x03, 0b01, 'layer III');
    assert.equal(b2 >> 4, 4, '32 kbit/s');
    assert.equal((b2 >> 2) & 0x03, 2, '16 kHz');
    offset += (72 * 32_000) / 16_000 + ((b2 >> 1) & 0x01);
    frames++;
  }
  assert.equal(offset, bytes.length, 'the last frame is cut short');
  return frames;
}

const LONG_TEXT = 'Thanks for calling the harbour office. Ferries leave every hour from pier two, and tickets are sold on board. '.repeat(3).slice(0, 300);
const holdTask = cpuTask<typeof poolTasks.hold>(new URL('../../platform/cpu-pool.test-tasks.ts', import.meta.url), 'hold');

describe('catalog', async () => {
  const t = await buildTestApp();

  it('lists the built-in voices with preview URLs, filterable by language and gender', async () => {
    const user = await signUp(t);
    const res = await t.request({ method: 'GET', url: '/v1/voices', token: user.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    const voices = res.json().data;
    assert.ok(voices.length >= 6);
    const ava = voices.find((v: { id: string }) => v.id === 'builtin-ava');
    assert.deepEqual(ava, {
      id: 'builtin-ava',
      name: 'Ava',
      language: 'en-US',
      gender: 'female',
      provider: 'builtin',
      description: ava.description,
      preview_url: 'http://localhost:3000/v1/voices/builtin-ava/preview',
    });
    assert.equal(new Set(voices.map((v: { id: string }) => v.id)).size, voices.length);
    const english = await t.request({ method: 'GET', url: '/v1/voices?language=en', token: user.accessToken });
    assert.ok(english.json().data.every((v: { language: string }) => v.language.startsWith('en-')));
    const german = await t.request({ method: 'GET', url: '/v1/voices?language=de-DE&gender=male', token: user.accessToken });
    assert.deepEqual(german.json().data.map((v: { id: string }) => v.id), ['builtin-felix']);
  });

  it('previews a voice as real MP3 audio, cacheable by ETag', async () => {
    const user = await signUp(t);
    const key = await createApiKey(t, user, 'read-only');
    const res = await t.request({ method: 'GET', url: '/v1/voices/builtin-ava/preview', token: key.key });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'audio/mpeg');
    const bytes = res.rawPayload;
    assert.ok(isMp3Frame(bytes), `not an MP3 frame header: ${bytes.subarray(0, 4).toString('hex')}`);
    assert.ok(bytes.length > 8_000, `only ${bytes.length} bytes`);
    const etag = String(res.headers.etag);
    const again = await t.request({ method: 'GET', url: '/v1/voices/builtin-ava/preview', token: key.key, headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    const other = await t.request({ method: 'GET', url: '/v1/voices/builtin-felix/preview', token: key.key });
    assert.ok(isMp3Frame(other.rawPayload));
    assert.notDeepEqual(other.rawPayload, bytes);
    const custom = await t.request({ method: 'GET', url: `/v1/voices/builtin-ava/preview?text=${encodeURIComponent('Hi.')}`, token: key.key });
    assert.ok(isMp3Frame(custom.rawPayload));
    assert.ok(custom.rawPayload.length < bytes.length);
  });

  it('speaks a 300-character text as whole MP3 frames (espeak-ng when installed, as the app does)', async () => {
    const user = await signUp(t);
    const key = await createApiKey(t, user, 'read-only');
    const res = await t.request({ method: 'GET', url: `/v1/voices/builtin-sam/preview?text=${encodeURIComponent(LONG_TEXT)}`, token: key.key });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'audio/mpeg');
    const frames = mpeg2Frames(res.rawPayload);
    // 576 samples a frame; the encoder adds its delay and a flushed frame or two.
    const speech = await createBuiltinTts({ espeak: createEspeakSpeech() }).synthesize(LONG_TEXT, 'builtin-sam');
    const extra = frames * 576 - speech.pcm.length;
    assert.ok(extra >= 0 && extra < 4 * 576, `${frames} frames for ${speech.pcm.length} samples`);
  });

  it('answers other requests while a preview is being synthesised', async () => {
    const user = await signUp(t);
    const key = await createApiKey(t, user, 'read-only');
    const cpu = t.platform.cpu;
    // Every worker thread is held until the gate opens, so the preview waits in the pool's queue
    // for as long as the test needs, however loaded the machine (a worker that raced the main
    // thread could otherwise finish it first).
    const gate = newGate();
    const holders = Array.from({ length: cpu.threads }, () => cpu.run(holdTask, { gate }));
    let previewDone = false;
    const preview = t.request({ method: 'GET', url: `/v1/voices/builtin-dev/preview?text=${encodeURIComponent(LONG_TEXT)}`, token: key.key }).then((res) => {
      previewDone = true;
      return res;
    });
    try {
      // The preview's work reaches the pool (were it done on this thread, the preview would finish first).
      while (cpu.pending <= cpu.threads && !previewDone) await nextTurn();
      assert.equal(previewDone, false, 'the preview finished without the worker threads');
      const health = await t.request({ method: 'GET', url: '/v1/health' });
      assert.equal(health.statusCode, 200, health.body);
      assert.equal(previewDone, false, '/v1/health waited for the preview');
    } finally {
      openGate(gate);
      await Promise.all(holders);
    }
    const res = await preview;
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(isMp3Frame(res.rawPayload));
  });

  it('is 503 service_unavailable with Retry-After while the worker threads and their queue are full', async () => {
    const user = await signUp(t);
    const key = await createApiKey(t, user, 'read-only');
    const cpu = t.platform.cpu;
    const gate = newGate();
    const holders = Array.from({ length: cpu.threads + cpu.queue }, () => cpu.run(holdTask, { gate }));
    try {
      const res = await t.request({ method: 'GET', url: `/v1/voices/builtin-ava/preview?text=${encodeURIComponent('Busy?')}`, token: key.key });
      assert.equal(res.statusCode, 503, res.body);
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
      assert.equal(res.json().code, 'service_unavailable');
      assert.equal(res.headers['retry-after'], '1');
    } finally {
      openGate(gate);
      await Promise.all(holders);
    }
    const again = await t.request({ method: 'GET', url: `/v1/voices/builtin-ava/preview?text=${encodeURIComponent('Busy?')}`, token: key.key });
    assert.equal(again.statusCode, 200, again.body);
  });

  it('is 404 for an unknown voice', async () => {
    const user = await signUp(t);
    const res = await t.request({ method: 'GET', url: '/v1/voices/nobody/preview', token: user.accessToken });
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(res.json().code, 'not_found');
  });

  it('lists agent templates, each of which creates a valid agent', async () => {
    const user = await signUp(t);
    const res = await t.request({ method: 'GET', url: '/v1/agent-templates', token: user.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    const templates = res.json().data;
    const ids = templates.map((x: { id: string }) => x.id);
    for (const id of ['receptionist', 'appointment-booking', 'lead-qualification', 'customer-support', 'outbound-survey']) {
      assert.ok(ids.includes(id), `missing template ${id}`);
    }
    for (const template of templates) {
      const created = await t.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: template.agent });
      assert.equal(created.statusCode, 201, `${template.id}: ${created.body}`);
      assert.equal(created.json().name, template.agent.name);
    }
  });
});

describe('built-in TTS', () => {
  it('with a pool, synthesises in a worker thread, to the same samples', async (ctx) => {
    const cpu = createCpuPool({ threads: 1 });
    ctx.after(() => cpu.close());
    const pending = createBuiltinTts({ cpu }).synthesize('Hello. How are you today?', 'builtin-cora');
    // Handed to the pool at once; done on this thread, it would have finished before returning.
    assert.equal(cpu.pending, 1);
    const inPool = await pending;
    assert.equal(cpu.pending, 0);
    const here = await createBuiltinTts().synthesize('Hello. How are you today?', 'builtin-cora');
    assert.ok(inPool.pcm instanceof Int16Array);
    assert.deepEqual(inPool.pcm, here.pcm);
  });

  it('speaks deterministically, longer text for longer, differently per voice', async () => {
    const tts = createBuiltinTts();
    const short = await tts.synthesize('Hello.', 'builtin-ava');
    const again = await tts.synthesize('Hello.', 'builtin-ava');
    const long = await tts.synthesize('Hello. Thanks for calling, how can I help you today with your order?', 'builtin-ava');
    const ben = await tts.synthesize('Hello.', 'builtin-ben');
    assert.equal(short.sampleRate, BUILTIN_SAMPLE_RATE);
    assert.deepEqual(short.pcm, again.pcm);
    assert.ok(long.pcm.length > short.pcm.length * 5);
    assert.notDeepEqual(ben.pcm, short.pcm);
    // Real audio: a fair share of samples away from silence.
    let loud = 0;
    for (const s of long.pcm) if (Math.abs(s) > 500) loud++;
    assert.ok(loud > long.pcm.length * 0.2, `only ${loud} of ${long.pcm.length} samples audible`);
  });
});

describe('catalog with a configured TTS provider', () => {
  it('lists the provider voices beside the built-in ones, previews them as MP3 and accepts them on agents', async (ctx) => {
    const fake = await startFakeSpeechServer({ apiKey: 'sk-test' });
    ctx.after(() => fake.close());
    const app = await buildTestApp({ env: { TTS_BASE_URL: fake.baseUrl, TTS_API_KEY: 'sk-test', TTS_VOICES: 'alloy,nova' }, t: ctx });
    const user = await signUp(app);
    const voices = (await app.request({ method: 'GET', url: '/v1/voices', token: user.accessToken })).json().data.map((v: { id: string }) => v.id);
    assert.ok(voices.includes('builtin-ava'));
    assert.ok(voices.includes('openai-alloy') && voices.includes('openai-nova'), voices.join(', '));
    const preview = await app.request({ method: 'GET', url: '/v1/voices/openai-nova/preview', token: user.accessToken });
    assert.equal(preview.statusCode, 200, preview.body);
    assert.equal(preview.headers['content-type'], 'audio/mpeg');
    assert.ok(isMp3Frame(preview.rawPayload));
    assert.equal(fake.requests.at(-1)?.body.voice, 'nova');
    const agent = await app.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: { name: 'Nova', voice: 'openai-nova' } });
    assert.equal(agent.statusCode, 201, agent.body);
  });
});

let shared: Promise<TestApp> | undefined;
const app = () => {
  shared ??= buildTestApp();
  return shared;
};
const get = (url: string) => async (_t: TestApp, owner: TestUser) => ({ method: 'GET' as const, url, headers: { authorization: `Bearer ${owner.accessToken}` } });

securitySuite('catalog', app, {
  'GET /v1/voices': { scope: 'read-only', prepare: get('/v1/voices') },
  'GET /v1/voices/{id}/preview': { scope: 'read-only', prepare: get('/v1/voices/builtin-sam/preview') },
  'GET /v1/agent-templates': { scope: 'read-only', prepare: get('/v1/agent-templates') },
});
