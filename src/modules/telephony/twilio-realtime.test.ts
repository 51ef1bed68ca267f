import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import alawmulaw from 'alawmulaw';
import { sayExactly, speechSamples, waitFor } from '../../../test/fakes/openai-realtime/caller.ts';
import { startFakeRealtimeServer } from '../../../test/fakes/openai-realtime/server.ts';
import { startFakeTwilio } from '../../../test/fakes/twilio/index.ts';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { freePort } from '../../../test/support/ports.ts';
import { decodedMs } from '../../../test/support/recordings.ts';
import { as, createCallAgent, waitForEnd } from '../calls/test-helpers.ts';
import { buyNumber } from './test-helpers.ts';

// A speech-to-speech agent on a real phone call: the fake Twilio's caller speaks mu-law over Media
// Streams, the platform hands the audio to the model (the fake Realtime server, told what it
// "hears"), the model's speech goes back as mu-law, a barge-in clears Twilio's buffer, and the
// model ending the call hangs up. No STT is configured: the model hears for itself. Twilio's media
// is mu-law, so the model is asked for mu-law (audio/pcmu) and the bytes pass through both ways.

const ACCOUNT_SID = `AC${'7b'.repeat(16)}`;
const AUTH_TOKEN = 'twilio-realtime-auth-token-0123456';
const PUBLIC_BASE_URL = 'https://voice.example.test';

const port = await freePort();
const twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, speed: 1, owned: [], proxy: { publicBaseUrl: PUBLIC_BASE_URL, localBaseUrl: `http://127.0.0.1:${port}` } });
const model = await startFakeRealtimeServer({ apiKey: 'sk-phone', timing: { msPerWord: 80 } });
after(async () => {
  await twilio.close();
  await model.close();
});
const t = await buildTestApp({
  env: {
    TELEPHONY_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    TWILIO_API_BASE_URL: twilio.baseUrl,
    // Twilio carries real audio, so start-up wants a recogniser; a speech-to-speech call never uses it.
    STT_BASE_URL: 'http://127.0.0.1:9/v1',
    REALTIME_BASE_URL: model.url,
    REALTIME_API_KEY: 'sk-phone',
    PUBLIC_BASE_URL,
    TRUST_PROXY: 'true',
  },
});
await t.app.listen({ port, host: '127.0.0.1' });


describe('a speech-to-speech agent on a Twilio call', () => {
  it('greets in mu-law, answers, is cut off (clear), ends the call on end_call; transcript, recording, cost', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { llm: { provider: 'openai-realtime' }, voice: 'ash', barge_in_min_ms: 100 });
    const { number } = await buyNumber(t, user, agent.id);
    model.reply(sayExactly, { text: 'We open at nine in the morning every day of the week except on Sundays and public holidays' }, { functionCall: { name: 'end_call', arguments: { reason: 'caller_goodbye' } } }, { text: 'Goodbye!' });
    model.hear('When do you open?', 'Thanks, bye');
    const call = await twilio.placeInboundCall({ from: '+14155550123', to: number });
    await call.streamStarted;
    await call.waitForAgentAudio(10_000);
    await call.waitForAgentQuiet(400, 20_000);
    await call.say(speechSamples(400));
    await call.silence(700);
    await call.waitForAgentAudio(20_000);
    const clears = call.clears;
    await call.say(speechSamples(400));
    await call.silence(700);
    const final = await call.ended;
    assert.equal(final.status, 'completed');
    assert.ok(call.clears > clears, 'the barge-in cleared the agent audio Twilio held');
    const listed = (await t.request({ method: 'GET', url: '/v1/calls', ...as(user) })).json().data[0];
    const ended = await waitForEnd(t, user, listed.id, 30_000);
    assert.deepEqual([ended.status, ended.end_reason, ended.direction], ['completed', 'caller_goodbye', 'inbound']);
    const texts = ended.transcript.map((e: { role: string; text: string; interrupted?: boolean }) => `${e.role}${e.interrupted ? ' (cut)' : ''}: ${e.text}`);
    assert.equal(texts[0], 'agent: Hello, this is Ada from the bistro. How can I help?');
    assert.equal(texts[1], 'user: When do you open?');
    // Cut where the caller spoke: on a loaded machine less of the answer is out by then (at load 11: 'We open').
    assert.match(texts[2], /^agent \(cut\): We\b/);
    assert.deepEqual(texts.slice(3), ['user: Thanks, bye', 'agent: Goodbye!']);
    assert.ok(ended.latency.turns >= 1);
    assert.ok(ended.cost_usd > 0);
    const recording = await t.request({ method: 'GET', url: `/v1/calls/${ended.id}/recording.mp3`, ...as(user) });
    assert.equal(recording.statusCode, 200);
    assert.equal(model.connections.at(-1)?.session().audio.output.voice, 'ash');
  });

  it('passes mu-law through: the model is asked for audio/pcmu, the caller\'s bytes reach it and its bytes reach Twilio unchanged; recording, transcript, latency', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { llm: { provider: 'openai-realtime' } });
    const { number } = await buyNumber(t, user, agent.id);
    model.reset();
    model.reply(sayExactly, { text: 'We open at nine every day' }, { functionCall: { name: 'end_call', arguments: { reason: 'caller_goodbye' } } }, { text: 'Goodbye!' });
    model.hear('When do you open?', 'Thanks, bye');
    const opened = model.connections.length;
    // 400 ms of a 300 Hz tone as mu-law at 8 kHz: bytes that all differ from silence's 0xff.
    const spoken = Uint8Array.from({ length: 8 * 400 }, (_, i) => alawmulaw.mulaw.encodeSample(Math.round(8000 * Math.sin((2 * Math.PI * 300 * i) / 8000))));
    const call = await twilio.placeInboundCall({ from: '+14155550124', to: number });
    await call.streamStarted;
    await call.waitForAgentAudio(10_000);
    await call.waitForAgentQuiet(400, 20_000);
    await call.sayMulaw(spoken);
    await call.silence(700);
    await call.waitForAgentAudio(20_000);
    await call.waitForAgentQuiet(400, 20_000);
    await call.sayMulaw(spoken);
    await call.silence(700);
    assert.equal((await call.ended).status, 'completed');
    const connection = await waitFor(() => model.connections[opened]);
    const update = connection.received[0];
    assert.equal(update.type, 'session.update');
    const asked = update.type === 'session.update' && update.session.type === 'realtime' ? update.session.audio : undefined;
    assert.deepEqual([asked?.input?.format, asked?.output?.format], [{ type: 'audio/pcmu' }, { type: 'audio/pcmu' }]);
    const appended = Buffer.concat(connection.received.flatMap((e) => (e.type === 'input_audio_buffer.append' ? [Buffer.from(e.audio, 'base64')] : [])));
    const turns = Buffer.concat([spoken, new Uint8Array(8 * 700).fill(0xff), spoken]);
    assert.deepEqual(new Uint8Array(appended.subarray(0, turns.length)), new Uint8Array(turns), 'the caller\'s mu-law reached the model as Twilio sent it');
    const modelAudio = Buffer.concat(connection.sent.flatMap((e) => (e.type === 'response.output_audio.delta' ? [Buffer.from(e.delta, 'base64')] : [])));
    assert.ok(modelAudio.length > 0);
    assert.deepEqual(call.agentMulaw(), new Uint8Array(modelAudio), 'the model\'s mu-law reached Twilio as the model sent it');
    const listed = (await t.request({ method: 'GET', url: '/v1/calls', ...as(user) })).json().data[0];
    const ended = await waitForEnd(t, user, listed.id, 30_000);
    assert.deepEqual([ended.status, ended.end_reason], ['completed', 'caller_goodbye']);
    assert.deepEqual(
      ended.transcript.map((e: { role: string; text: string }) => `${e.role}: ${e.text}`),
      ['agent: Hello, this is Ada from the bistro. How can I help?', 'user: When do you open?', 'agent: We open at nine every day', 'user: Thanks, bye', 'agent: Goodbye!'],
    );
    assert.equal(ended.latency.turns, 2);
    assert.ok(ended.transcript[2].latency_ms >= 0);
    const recording = await t.request({ method: 'GET', url: `/v1/calls/${ended.id}/recording.mp3`, ...as(user) });
    assert.equal(recording.statusCode, 200);
    const seconds = (await decodedMs(recording.rawPayload)) / 1000;
    assert.ok(Math.abs(seconds - ended.duration_ms / 1000) <= (ended.duration_ms / 1000) * 0.1 + 0.1, `recording ${seconds} s, call ${ended.duration_ms} ms`);
  });
});
