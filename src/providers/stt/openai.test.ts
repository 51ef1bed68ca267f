import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../config.ts';
import { createDialogueEngine } from '../../engine/index.ts';
import { createVoiceActivityDetector } from '../../runtime/audio/vad.ts';
import { createCallSession, REPEAT_PROMPT } from '../../runtime/call-session.ts';
import { createVirtualClock } from '../../runtime/virtual-clock.ts';
import { createMediaPair } from '../telephony/media-pair.ts';
import type { CallAgent } from '../../runtime/call-agent.ts';
import { createScriptedCaller } from '../telephony/scripted-caller.ts';
import { createBuiltinLlm } from '../llm/builtin.ts';
import { createBuiltinTts } from '../tts/builtin.ts';
import { createTtsRegistry } from '../tts/index.ts';
import { createRuntimeSpeech } from '../tts/runtime-speech.ts';
import { startFakeSttServer } from '../../../test/fakes/openai/stt.ts';
import { createOpenAiStt } from './openai.ts';

// The OpenAI-compatible speech-to-text adapter, through the real `openai` SDK, against a local
// server speaking POST /v1/audio/transcriptions; then inside a live call session.

const fake = await startFakeSttServer();
after(() => fake.close());
const speech = (await createBuiltinTts().synthesize('What time do you open tomorrow?', 'builtin-ben')).pcm;

describe('OpenAI-compatible STT', () => {
  it('sends one utterance as a 16 kHz mono WAV with the model, the language and the key; answers the text', async () => {
    const stt = createOpenAiStt({ baseUrl: fake.baseUrl, apiKey: 'sk-test', model: 'whisper-1', timeoutMs: 5000 });
    fake.say(' What time do you open tomorrow? ');
    const text = await stt.transcribe(speech, { language: 'en-GB' });
    assert.equal(text, 'What time do you open tomorrow?');
    const sent = fake.requests.at(-1);
    assert.ok(sent);
    assert.deepEqual({ model: sent.model, language: sent.language, format: sent.responseFormat, auth: sent.authorization }, { model: 'whisper-1', language: 'en', format: 'json', auth: 'Bearer sk-test' });
    assert.equal(sent.wav.toString('ascii', 0, 4), 'RIFF');
    assert.equal(sent.wav.toString('ascii', 8, 12), 'WAVE');
    assert.equal(sent.wav.readUInt16LE(22), 1, 'mono');
    assert.equal(sent.wav.readUInt32LE(24), 16_000);
    assert.equal(sent.wav.readUInt32LE(40), speech.length * 2);
    assert.deepEqual(new Int16Array(sent.wav.buffer.slice(sent.wav.byteOffset + 44, sent.wav.byteOffset + sent.wav.length)), speech);
  });

  it('fails within its timeout when the server is slow, and on a server error', async () => {
    const stt = createOpenAiStt({ baseUrl: fake.baseUrl, model: 'whisper-1', timeoutMs: 200 });
    fake.set({ delayMs: 2000 });
    await assert.rejects(stt.transcribe(speech, { language: 'en-US' }));
    fake.set({ delayMs: 0, status: 503 });
    await assert.rejects(stt.transcribe(speech, { language: 'en-US' }));
    fake.set({ status: 200 });
  });

  it('in a call: the caller is heard through it; when it fails, call.error and the agent asks again', async () => {
    const agent: CallAgent = {
      id: 'agent_stt', name: 'Ada', prompt: 'You are Ada.', first_message: 'Hello, this is Ada.', language: 'en-US', transfer_number: null,
      functions: [], extraction_fields: [], end_call_phrases: [], knowledge_base_ids: [], llm: { provider: 'builtin', model: 'builtin', temperature: 0 },
      voice: 'builtin-ava', max_duration_seconds: 120, voicemail: { action: 'hangup', message: null }, turn_end_silence_ms: 500, barge_in_min_ms: 250,
      interruptible: true, silence_timeout_seconds: 3,
    };
    const tts = createRuntimeSpeech(createTtsRegistry());
    // Virtual time (as a sandbox call's): the HTTP round trips hold it, so a loaded machine changes nothing.
    const clock = createVirtualClock({ speed: 20 });
    const { stream, far } = createMediaPair();
    // The simulated caller's own recogniser is not used: the call hears it through the HTTP adapter.
    const caller = createScriptedCaller({ clock, far, tts, voice: 'builtin-ben', script: ['Hello there, can you hear me?', 'Thanks, goodbye!'] }, { push: () => undefined });
    const stt = createOpenAiStt({ baseUrl: fake.baseUrl, model: 'whisper-1', timeoutMs: 60_000 }); // a loaded machine may be slow; the failure tested is the 503
    const vad = await createVoiceActivityDetector({ mode: 2 });
    const errors: string[] = [];
    fake.set({ status: 503 });
    let first = true;
    const session = createCallSession({
      clock,
      media: { stream, answeredBy: 'human', transfer: async () => stream.close(), hangup: async () => stream.close() },
      stt: {
        // The first utterance meets a failing server; then it recovers and hears "goodbye".
        async transcribe(audio, options) {
          try {
            return await stt.transcribe(audio, options);
          } finally {
            if (first) {
              first = false;
              fake.set({ status: 200 });
              fake.say('Thanks, goodbye!');
            }
          }
        },
      },
      tts,
      engine: createDialogueEngine({ llm: createBuiltinLlm(), knowledge: { search: async () => [] }, functions: { invoke: async () => ({ status: 200, body: null, duration_ms: 0 }) } }),
      agent,
      workspaceId: 'ws_stt',
      variables: {},
      isSpeech: (frame) => vad.isSpeech(frame),
      observer: { transcript: () => undefined, transfer: () => undefined, error: (code) => void errors.push(code) },
    });
    caller.start();
    const outcome = await session.run();
    caller.stop();
    vad.close();
    assert.deepEqual(errors, ['stt_failed']);
    assert.deepEqual(outcome.transcript.map((e) => `${e.role}: ${e.text}`), [
      'agent: Hello, this is Ada.',
      `agent: ${REPEAT_PROMPT}`,
      'user: Thanks, goodbye!',
      'agent: Thank you for your time. Have a great day, goodbye!',
    ]);
    assert.equal(outcome.endReason, 'caller_goodbye');
  });

  it('TELEPHONY_PROVIDER=twilio without STT_BASE_URL stops start-up naming the variable', () => {
    const twilio = { TELEPHONY_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`, TWILIO_AUTH_TOKEN: 'token' };
    assert.throws(() => loadConfig(twilio), (error: unknown) => error instanceof ConfigError && /STT_BASE_URL/.test(error.message));
    assert.equal(loadConfig({ ...twilio, STT_BASE_URL: 'http://127.0.0.1:9/v1' }).stt.model, 'whisper-1');
  });
});
