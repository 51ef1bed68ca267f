import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { createApiKey, signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { BUILTIN_SAMPLE_RATE, createBuiltinTts } from '../../providers/tts/builtin.ts';
import { startFakeSpeechServer } from '../../providers/tts/fake-server.ts';

/** True when `bytes` starts with an MPEG audio frame header (11-bit 0x7FF sync, layer III). */
function isMp3Frame(bytes: Buffer): boolean {
  return bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0 && ((bytes[1] >> 1) & 0x03) === 0x01;
}

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
