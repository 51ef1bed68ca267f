import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import twilio from 'twilio';
import WebSocket from 'ws';
import { buildTestApp } from '../../../test/support/app.ts';
import { spoken } from '../../../test/support/speech.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { checkMediaHealth, describeMediaHealth } from '../../providers/health.ts';
import { createScaledClock } from '../../runtime/clock.ts';
import { startFakeSttServer } from '../../../test/fakes/openai/stt.ts';
import { startFakeTwilio } from '../../../test/fakes/twilio/index.ts';
import type { FakeCall, FakeCallee } from '../../../test/fakes/twilio/types.ts';
import { as, createCallAgent, placeCall, waitForEnd } from '../calls/test-helpers.ts';
import { buyNumber as buyNumberOf } from './test-helpers.ts';
import { freePort } from '../../../test/support/ports.ts';

// Real phone calls end to end against a local fake Twilio written from Twilio's documentation:
// REST (calls, numbers) reached through the real `twilio` SDK, signed webhooks sent through a
// TLS-terminating "proxy" (Twilio signs the public https address; the app sees X-Forwarded-*),
// and the Media Streams WebSocket carrying real mu-law audio of synthesised speech. Speech is
// heard through the OpenAI-compatible STT adapter (a local fake answering scripted texts). Call
// time runs SPEED times faster on both sides (the app's call clock and the fake's pacing).

const ACCOUNT_SID = `AC${'5a'.repeat(16)}`;
const AUTH_TOKEN = 'twilio-test-auth-token-0123456789';
const PUBLIC_BASE_URL = 'https://voice.example.test';
const SPEED = 4;
const OWNED_NUMBER = '+14155550999';

const port = await freePort();
const fake = await startFakeTwilio({
  accountSid: ACCOUNT_SID,
  authToken: AUTH_TOKEN,
  speed: SPEED,
  owned: [OWNED_NUMBER],
  proxy: { publicBaseUrl: PUBLIC_BASE_URL, localBaseUrl: `http://127.0.0.1:${port}` },
});
const stt = await startFakeSttServer();
after(async () => {
  await fake.close();
  await stt.close();
});
const t = await buildTestApp({
  env: {
    TELEPHONY_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    TWILIO_API_BASE_URL: fake.baseUrl,
    STT_BASE_URL: stt.baseUrl,
    PUBLIC_BASE_URL,
    TRUST_PROXY: 'true',
  },
  providers: { callClock: createScaledClock(SPEED) },
});
await t.app.listen({ port, host: '127.0.0.1' });


const VOICEMAIL_MESSAGE = 'Hi, this is Ada from the bistro. Please call us back.';

/** An outbound call to `to`, answered as `callee` says, by an agent that leaves VOICEMAIL_MESSAGE: dialed, its stream started. */
async function dialMachine(to: string, callee: FakeCallee) {
  const user = await signUp(t);
  const agent = await createCallAgent(t, user, { voicemail: { action: 'leave_message', message: VOICEMAIL_MESSAGE } });
  const { number } = await buyNumber(user, agent.id);
  fake.setCallee(to, callee);
  const queued = await placeCall(t, user, { agent_id: agent.id, to, from: number });
  await t.modules.calls.worker.runDueOnce();
  const call = await fake.waitForCall(to);
  await call.streamStarted;
  return { user, number, queued, call };
}

/** The caller says `text` (the STT fake will hear it), then is quiet long enough to end the turn. */
async function callerSays(call: FakeCall, text: string) {
  stt.say(text);
  await call.say(await spoken(text));
  await call.silence(900);
}

const rms = (pcm: Int16Array) => Math.sqrt(pcm.reduce((sum, s) => sum + s * s, 0) / Math.max(1, pcm.length));

const buyNumber = (user: TestUser, agentId: string) => buyNumberOf(t, user, agentId);

async function latestCall(user: TestUser) {
  const list = await t.request({ method: 'GET', url: '/v1/calls', ...as(user) });
  return list.json().data[0] as { id: string };
}

describe('Twilio calls', () => {
  it('inbound: greeting as mu-law, the caller heard and answered, a barge-in clears, a digit, goodbye; transcript, recording, events, cost', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const { number } = await buyNumber(user, agent.id);
    const held = fake.numbers().find((n) => n.phoneNumber === number);
    assert.equal(held?.voiceUrl, `${PUBLIC_BASE_URL}/v1/telephony/twilio/voice`, 'the bought number rings this deployment');

    const call = await fake.placeInboundCall({ from: '+14155550123', to: number });
    await call.streamStarted;
    await call.waitForAgentAudio(10_000);
    await call.waitForAgentQuiet(600, 20_000);
    assert.ok(call.agentAudio().length > 8000, 'the greeting played: more than a second of audio');
    assert.ok(rms(call.agentAudio()) > 300, 'the greeting is speech, not silence');

    // The interruption is synthesised before the answer starts: at SPEED 4 the answer lasts under a
    // second of wall time, and espeak-ng on a busy machine could take longer than that to speak it.
    const interruption = 'Sorry, can I also book a table for two people tonight please?';
    const interruptionAudio = await spoken(interruption);
    await callerSays(call, 'What time do you open tomorrow?');
    await call.waitForAgentAudio(20_000);
    // The caller talks over the agent's answer: the platform clears Twilio's buffer.
    const clearsBefore = call.clears;
    stt.say(interruption);
    await call.say(interruptionAudio);
    await call.silence(900);
    assert.ok(call.clears > clearsBefore, 'a barge-in sends clear');
    await call.waitForAgentAudio(20_000);
    await call.waitForAgentQuiet(600, 30_000);
    call.pressDigit('5');
    await callerSays(call, 'Great, thank you. Goodbye!');
    const final = await call.ended;
    assert.equal(final.status, 'completed');

    const placed = await latestCall(user);
    const ended = await waitForEnd(t, user, placed.id, 30_000);
    assert.equal(ended.status, 'completed');
    assert.equal(ended.end_reason, 'caller_goodbye');
    assert.equal(ended.direction, 'inbound');
    assert.deepEqual([ended.from, ended.to], ['+14155550123', number]);
    const texts = ended.transcript.map((e: { role: string; text: string }) => `${e.role}: ${e.text}`);
    assert.equal(texts[0], 'agent: Hello, this is Ada from the bistro. How can I help?');
    assert.ok(texts.includes('user: What time do you open tomorrow?'), texts.join('\n'));
    assert.ok(texts.includes('user: Great, thank you. Goodbye!'), texts.join('\n'));
    assert.ok(ended.transcript.some((e: { interrupted?: boolean }) => e.interrupted === true), 'the interrupted agent turn is marked');
    assert.ok(ended.transcript.some((e: { text: string; dtmf?: boolean }) => e.dtmf === true && e.text === '5'), 'the digit is in the transcript');
    assert.ok(ended.latency.turns >= 2);
    // The recogniser was sent the caller's utterances as cut by the VAD: 16 kHz WAVs of speech length.
    const heard = stt.requests.slice(-3).map((r) => (r.wav.length - 44) / 2 / 16_000);
    assert.ok(heard.every((seconds) => seconds > 0.8 && seconds < 8), `utterances of ${heard.join(', ')} s`);
    assert.ok(ended.cost_usd > 0);
    assert.ok(call.marksReceived.length > 0 && call.marksPlayed.length > 0, 'agent turns are marked and Twilio reports them played');

    const events = await t.request({ method: 'GET', url: `/v1/calls/${ended.id}/events`, ...as(user) });
    assert.deepEqual(events.json().data.map((e: { status: string }) => e.status), ['queued', 'ringing', 'in_progress', 'completed']);
    const recording = await t.request({ method: 'GET', url: `/v1/calls/${ended.id}/recording.mp3`, ...as(user) });
    assert.equal(recording.statusCode, 200);
    assert.equal(recording.headers['content-type'], 'audio/mpeg');
    assert.ok(recording.rawPayload.length > 10_000);
  });

  it('outbound: calls.create with status callbacks and AMD; a machine heard while the greeting plays gets the voicemail message, then the call ends as voicemail', async () => {
    const to = '+14155550177';
    // The verdict comes once the greeting plays (a verdict timed from the answer could, on a loaded
    // machine, come before the call started: that order is the next test's and call-session's).
    const { user, number, queued, call } = await dialMachine(to, { answer: 'machine', amdDelayMs: 300, verdictWhileAgentSpeaks: true });
    void call.say(await spoken("Hi, you've reached the voicemail of this number. Please leave a message after the tone.")).catch(() => undefined);
    const ended = await waitForEnd(t, user, queued.id, 30_000);
    assert.equal(ended.status, 'voicemail');
    assert.equal(ended.end_reason, 'voicemail');
    assert.equal(ended.transcript.at(-1).text, VOICEMAIL_MESSAGE);

    const created = fake.requests.find((r) => r.method === 'POST' && r.path.endsWith('/Calls.json') && r.params.To === to);
    assert.ok(created, 'the call was created through the REST API');
    assert.equal(created.params.From, number);
    assert.equal(created.params.Url, `${PUBLIC_BASE_URL}/v1/telephony/twilio/voice?call_id=${queued.id}`);
    assert.equal(created.params.StatusCallback, `${PUBLIC_BASE_URL}/v1/telephony/twilio/status?call_id=${queued.id}`);
    assert.deepEqual(created.params.StatusCallbackEvent, ['initiated', 'ringing', 'answered', 'completed']);
    assert.deepEqual([created.params.MachineDetection, created.params.AsyncAmd], ['DetectMessageEnd', 'true']);
    assert.ok(call.clears >= 1, 'the greeting stopped when the machine was detected');
    assert.ok(call.updates.some((u) => u.status === 'completed'), 'the platform hung up through the REST API');
  });

  it('outbound: a machine verdict that reaches us before the media stream (answered, verdict, stream) leaves the message at once', async () => {
    const { user, queued, call } = await dialMachine('+14155550178', { answer: 'machine', amdDelayMs: 200, verdictBeforeMedia: true });
    const ended = await waitForEnd(t, user, queued.id, 30_000);
    assert.deepEqual([ended.status, ended.end_reason], ['voicemail', 'voicemail']);
    assert.deepEqual(ended.transcript.map((e: { role: string; text: string }) => `${e.role}: ${e.text}`), [`agent: ${VOICEMAIL_MESSAGE}`], 'the message, and no greeting');
    assert.ok(call.updates.some((u) => u.status === 'completed'), 'the platform hung up through the REST API');
  });

  it('outbound: busy and no-answer come back as the call state', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const { number } = await buyNumber(user, agent.id);
    fake.setCallee('+14155550181', { answer: 'busy' });
    fake.setCallee('+14155550182', { answer: 'no-answer' });
    const busy = await placeCall(t, user, { agent_id: agent.id, to: '+14155550181', from: number });
    const silent = await placeCall(t, user, { agent_id: agent.id, to: '+14155550182', from: number });
    const [a, b] = await Promise.all([waitForEnd(t, user, busy.id, 30_000), waitForEnd(t, user, silent.id, 30_000)]);
    assert.deepEqual([a.status, a.end_reason], ['busy', 'busy']);
    assert.deepEqual([b.status, b.end_reason], ['no_answer', 'no_answer']);
  });

  it('outbound: a failed connection is failed_to_connect; a hang-up through the API while ringing cancels it at Twilio', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const { number } = await buyNumber(user, agent.id);
    fake.setCallee('+14155550185', { answer: 'failed' });
    const failed = await placeCall(t, user, { agent_id: agent.id, to: '+14155550185', from: number });
    const ended = await waitForEnd(t, user, failed.id, 30_000);
    assert.deepEqual([ended.status, ended.end_reason], ['failed', 'failed_to_connect']);

    // As long as Twilio lets it ring (30 s, 7.5 s here at speed 4): the hang-up must arrive while it rings, even on a loaded machine.
    fake.setCallee('+14155550186', { answer: 'human', ringMs: 30_000 });
    const ringing = await placeCall(t, user, { agent_id: agent.id, to: '+14155550186', from: number });
    await t.modules.calls.worker.runDueOnce();
    const call = await fake.waitForCall('+14155550186');
    assert.equal((await t.request({ method: 'POST', url: `/v1/calls/${ringing.id}/hangup`, ...as(user) })).statusCode, 200);
    const canceled = await waitForEnd(t, user, ringing.id, 30_000);
    assert.deepEqual([canceled.status, canceled.end_reason], ['canceled', 'api_hangup']);
    assert.equal((await call.ended).status, 'canceled', 'Twilio was told to cancel the ringing call');
  });

  it('the media health check finds Twilio and the STT server reachable, and says when one is not', async () => {
    const health = await checkMediaHealth({ providers: t.platform.providers, config: t.platform.config });
    assert.deepEqual([health.telephony.provider, health.telephony.real, health.telephony.reachable], ['twilio', true, true]);
    assert.deepEqual([health.stt.provider, health.stt.reachable], ['openai-compatible', true]);
    assert.ok(['espeak-ng', 'formant'].includes(health.tts.builtin_engine));
    assert.match(describeMediaHealth(health), /^telephony twilio \(reachable, \d+ ms\) · stt openai-compatible \(reachable, \d+ ms\) · tts built-in voices via /);
    const down = await checkMediaHealth({ providers: t.platform.providers, config: { ...t.platform.config, stt: { baseUrl: `http://127.0.0.1:${await freePort()}/v1` } }, timeoutMs: 2000 });
    assert.equal(down.stt.reachable, false);
    assert.match(describeMediaHealth(down), /stt openai-compatible \(NOT reachable/);
  });

  it('transfer through the API sends <Dial> to the live call; hang-up through the API completes it', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const { number } = await buyNumber(user, agent.id);
    const first = await placeCall(t, user, { agent_id: agent.id, to: '+14155550183', from: number });
    await t.modules.calls.worker.runDueOnce();
    const transferred = await fake.waitForCall('+14155550183');
    await transferred.streamStarted;
    await transferred.waitForAgentAudio(10_000);
    const res = await t.request({ method: 'POST', url: `/v1/calls/${first.id}/transfer`, ...as(user), payload: { to: '+14155550188' } });
    assert.equal(res.statusCode, 200, res.body);
    const done = await waitForEnd(t, user, first.id, 30_000);
    assert.deepEqual([done.status, done.transferred_to], ['transferred', '+14155550188']);
    assert.equal(transferred.transferredTo(), '+14155550188');

    const second = await placeCall(t, user, { agent_id: agent.id, to: '+14155550184', from: number });
    await t.modules.calls.worker.runDueOnce();
    const hungUp = await fake.waitForCall('+14155550184');
    await hungUp.streamStarted;
    await hungUp.waitForAgentAudio(10_000);
    assert.equal((await t.request({ method: 'POST', url: `/v1/calls/${second.id}/hangup`, ...as(user) })).statusCode, 200);
    const over = await waitForEnd(t, user, second.id, 30_000);
    assert.deepEqual([over.status, over.end_reason], ['completed', 'api_hangup']);
    assert.ok(hungUp.updates.some((u) => u.status === 'completed'));
  });
});

describe('Twilio requests are verified', () => {
  const form = (params: Record<string, string>) => new URLSearchParams(params).toString();
  const voiceUrl = `${PUBLIC_BASE_URL}/v1/telephony/twilio/voice`;
  /** A form POST to `path` signed with the account's token, as Twilio sends it. */
  const signedPost = (path: string, params: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC_BASE_URL}${path}`, params) },
      payload: form(params),
    });

  it('a forged or missing X-Twilio-Signature is 403 and creates nothing; the right one is answered with a stream', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const { number } = await buyNumber(user, agent.id);
    const params = { CallSid: `CA${'0f'.repeat(16)}`, AccountSid: ACCOUNT_SID, From: '+14155550111', To: number, CallStatus: 'ringing', Direction: 'inbound' };
    const count = async () => (await t.request({ method: 'GET', url: '/v1/calls', ...as(user) })).json().data.length;
    const before = await count();
    for (const signature of [undefined, 'bm90IGEgc2lnbmF0dXJl', twilio.getExpectedTwilioSignature('wrong-token', voiceUrl, params)]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/telephony/twilio/voice',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(signature ? { 'x-twilio-signature': signature } : {}) },
        payload: form(params),
      });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().code, 'invalid_signature');
    }
    // Signed for other parameters than those sent.
    const tampered = await t.app.inject({
      method: 'POST',
      url: '/v1/telephony/twilio/voice',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, voiceUrl, params) },
      payload: form({ ...params, To: '+14155550000' }),
    });
    assert.equal(tampered.statusCode, 403);
    const status = await t.app.inject({
      method: 'POST',
      url: '/v1/telephony/twilio/status',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'forged' },
      payload: form({ CallSid: params.CallSid, CallStatus: 'busy' }),
    });
    assert.equal(status.statusCode, 403);
    assert.equal(await count(), before, 'no call was created');

    const signed = await signedPost('/v1/telephony/twilio/voice', params);
    assert.equal(signed.statusCode, 200, signed.body);
    assert.match(String(signed.headers['content-type']), /^text\/xml/);
    assert.match(signed.body, /<Connect><Stream url="wss:\/\/voice\.example\.test\/v1\/telephony\/twilio\/stream"><Parameter name="call_id" value="call_[^"]+"\/><Parameter name="token" value="[^"]+"\/><\/Stream><\/Connect>/);
    assert.equal(await count(), before + 1);
    // The caller hangs up before the stream connects: the status callback settles the call.
    const hungUp = { CallSid: params.CallSid, AccountSid: ACCOUNT_SID, CallStatus: 'completed' };
    const settled = await signedPost('/v1/telephony/twilio/status', hungUp);
    assert.equal(settled.statusCode, 204, settled.body);
    const call = await latestCall(user);
    const read = (await t.request({ method: 'GET', url: `/v1/calls/${call.id}`, ...as(user) })).json();
    assert.deepEqual([read.status, read.end_reason], ['canceled', 'customer_hangup']);
  });

  it("a call to a number whose agent was deleted is told it is not in service and hung up: no call created", async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const { number } = await buyNumber(user, agent.id);
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/agents/${agent.id}`, ...as(user) })).statusCode, 204);
    const params = { CallSid: `CA${'0e'.repeat(16)}`, AccountSid: ACCOUNT_SID, From: '+14155550112', To: number, CallStatus: 'ringing', Direction: 'inbound' };
    const res = await signedPost('/v1/telephony/twilio/voice', params);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.body, /<Say>The number you have called is not in service\.<\/Say><Hangup\/>/);
    assert.equal((await t.request({ method: 'GET', url: '/v1/calls', ...as(user) })).json().data.length, 0);
  });

  it('hostile forms are refused with problem+json before anything is read: NUL, oversize, wrong type', async () => {
    const post = (payload: string, type = 'application/x-www-form-urlencoded') =>
      t.app.inject({ method: 'POST', url: '/v1/telephony/twilio/voice', headers: { 'content-type': type, 'x-twilio-signature': 'x' }, payload });
    const nul = await post('CallSid=CA%00x&To=%2B1');
    assert.equal(nul.statusCode, 422, nul.body);
    assert.equal(nul.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal((await post(`Body=${'a'.repeat(70_000)}`)).statusCode, 413);
    assert.equal((await post('{"CallSid":"CA1"}', 'application/json')).statusCode, 403, 'JSON is parsed, but no signature matches it');
    assert.equal((await post('CallSid=CA1', 'text/plain')).statusCode, 415);
  });

  it('a stream token works once: a replayed or wrong token is refused (1008) and the live call goes on', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const { number } = await buyNumber(user, agent.id);
    const call = await fake.placeInboundCall({ from: '+14155550124', to: number });
    await call.streamStarted;
    const parameters = call.streamParameters();
    assert.ok(parameters.call_id && parameters.token);
    const closeCodeOf = (customParameters: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC_BASE_URL.replace(/^https/, 'wss')}/v1/telephony/twilio/stream`, {});
        const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/telephony/twilio/stream`, { headers: { 'x-twilio-signature': signature } });
        socket.on('open', () => {
          socket.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
          socket.send(JSON.stringify({ event: 'start', sequenceNumber: '1', streamSid: `MZ${'1'.repeat(32)}`, start: { streamSid: `MZ${'1'.repeat(32)}`, accountSid: ACCOUNT_SID, callSid: call.sid, tracks: ['inbound'], customParameters } }));
        });
        socket.on('close', (code) => resolve(code));
        socket.on('error', reject);
      });
    // Without Twilio's signature the upgrade itself is refused.
    const unsigned = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/telephony/twilio/stream`);
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('open', () => resolve(101));
      socket.on('error', () => undefined);
    });
    assert.equal(unsigned, 403);
    assert.equal(await closeCodeOf(parameters), 1008, 'replayed token');
    assert.equal(await closeCodeOf({ ...parameters, token: 'x'.repeat(32) }), 1008, 'wrong token');
    await call.waitForAgentAudio(10_000);
    await call.hangUp();
    const ended = await waitForEnd(t, user, parameters.call_id, 30_000);
    assert.deepEqual([ended.status, ended.end_reason], ['completed', 'customer_hangup']);
  });
});

describe('Twilio phone numbers', () => {
  it('searches, buys, imports and releases through IncomingPhoneNumbers; an imported number stays on the account', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const { id, number } = await buyNumber(user, agent.id);
    assert.ok(fake.requests.some((r) => r.method === 'GET' && r.path.includes('/AvailablePhoneNumbers/US/Local.json')));
    const imported = await t.request({ method: 'POST', url: '/v1/phone-numbers/import', ...as(user), payload: { number: OWNED_NUMBER } });
    assert.equal(imported.statusCode, 201, imported.body);
    assert.equal(fake.numbers().find((n) => n.phoneNumber === OWNED_NUMBER)?.voiceUrl, `${PUBLIC_BASE_URL}/v1/telephony/twilio/voice`);
    const unknown = await t.request({ method: 'POST', url: '/v1/phone-numbers/import', ...as(user), payload: { number: '+14155550444' } });
    assert.equal(unknown.statusCode, 422, 'a number the account does not hold');

    assert.equal((await t.request({ method: 'DELETE', url: `/v1/phone-numbers/${id}`, ...as(user) })).statusCode, 204);
    assert.equal(fake.numbers().some((n) => n.phoneNumber === number), false, 'a bought number goes back to Twilio');
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/phone-numbers/${imported.json().id}`, ...as(user) })).statusCode, 204);
    const kept = fake.numbers().find((n) => n.phoneNumber === OWNED_NUMBER);
    assert.ok(kept, 'an imported number stays the user’s');
    assert.ok(!kept.voiceUrl, 'but no longer rings this deployment');
  });
});
