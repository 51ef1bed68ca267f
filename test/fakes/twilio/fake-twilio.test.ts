import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import alawmulaw from 'alawmulaw';
import twilio from 'twilio';
import { createTwilioClient, type TwilioClient } from '../../../src/providers/telephony/twilio/client.ts';
import { startPlatform, until } from './fake-platform.ts';
import { type FakeTwilio, startFakeTwilio } from './index.ts';

// The fake Twilio driven as the platform will drive it: through the official SDK, with a real HTTP
// server answering its webhooks and a real WebSocket server receiving its Media Streams.

const accountSid = `AC${'0123456789abcdef'.repeat(2)}`;
const authToken = 'fake-auth-token';
const OUR_NUMBER = '+14155550100';
const SPEED = 10;
const { RestException } = twilio;
type RestException = InstanceType<typeof RestException>;

/** A 440 Hz tone, PCM16 mono. */
function tone(ms: number, rate: number): Int16Array {
  return Int16Array.from({ length: (ms * rate) / 1000 }, (_, index) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * index) / rate)));
}

const mulawTone = (ms: number) => Buffer.from(alawmulaw.mulaw.encode(tone(ms, 8000))).toString('base64');

describe('fake Twilio', () => {
  let fake: FakeTwilio;
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let client: TwilioClient;
  let streamsSeen = 0;

  before(async () => {
    fake = await startFakeTwilio({ accountSid, authToken, owned: [OUR_NUMBER], speed: SPEED });
    platform = await startPlatform({ authToken, streamParameters: { agent: 'agent_1', campaign: 'spring & summer' } });
    client = createTwilioClient({ accountSid, authToken, apiBaseUrl: fake.baseUrl });
  });
  after(async () => {
    await fake.close();
    await platform.close();
  });

  /** Places an outbound call through the SDK and waits for its Media Stream. */
  async function connectedCall(to: string, extra: Record<string, unknown> = {}) {
    const created = await client.calls.create({ to, from: OUR_NUMBER, url: platform.url('/voice'), statusCallback: platform.url(`/status/${to}`), ...extra });
    const call = await fake.waitForCall(to);
    assert.equal(call.sid, created.sid);
    await call.streamStarted;
    const stream = await platform.nextStream(streamsSeen++);
    const start = await stream.next('start');
    return { created, call, stream, streamSid: start.streamSid as string };
  }

  test('calls.create: signed status callbacks in order, a signed voice webhook, and a stream whose start carries the parameters', async () => {
    const to = '+15005550001';
    const { created, call, stream, streamSid } = await connectedCall(to, { statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'] });
    assert.equal(created.status, 'queued');
    assert.equal(created.direction, 'outbound-api');
    assert.match(created.sid, /^CA[0-9a-f]{32}$/);

    const voice = platform.received('/voice').find((request) => request.params.CallSid === call.sid)!;
    assert.equal(voice.signatureValid, true);
    assert.deepEqual([voice.params.CallStatus, voice.params.Direction, voice.params.To, voice.params.From], ['in-progress', 'outbound-api', to, OUR_NUMBER]);
    assert.equal(voice.params.AnsweredBy, undefined);

    assert.equal(stream.signatureValid, true);
    assert.deepEqual(stream.messages[0], { event: 'connected', protocol: 'Call', version: '1.0.0' });
    const start = stream.messages[1];
    assert.equal(start.event, 'start');
    assert.equal(start.sequenceNumber, '1');
    assert.match(streamSid, /^MZ[0-9a-f]{32}$/);
    assert.deepEqual(start.start, {
      accountSid,
      streamSid,
      callSid: call.sid,
      tracks: ['inbound'],
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      customParameters: { agent: 'agent_1', campaign: 'spring & summer' },
    });
    assert.deepEqual(call.streamParameters(), { agent: 'agent_1', campaign: 'spring & summer' });

    await call.hangUp();
    assert.equal((await stream.next('stop')).stop.callSid, call.sid);
    await stream.closed;
    assert.deepEqual(await call.ended, { status: 'completed' });
    const callbacks = await until(() => (platform.received(`/status/${to}`).length === 4 ? platform.received(`/status/${to}`) : undefined), 'four status callbacks');
    assert.deepEqual(
      callbacks.map((callback) => callback.params.CallStatus),
      ['initiated', 'ringing', 'in-progress', 'completed'],
    );
    assert.deepEqual(
      callbacks.map((callback) => callback.params.SequenceNumber),
      ['0', '1', '2', '3'],
    );
    assert.ok(callbacks.every((callback) => callback.signatureValid && callback.params.CallSid === call.sid));
    assert.match(callbacks[3].params.CallDuration, /^\d+$/);
    assert.equal((await client.calls(call.sid).fetch()).status, 'completed');
  });

  test('caller audio arrives as 20 ms mu-law media frames of the right length, and digits as dtmf', async () => {
    const { call, stream, streamSid } = await connectedCall('+15005550002');
    await call.say(tone(200, 16000));
    const frames = await until(() => (stream.messages.filter((m) => m.event === 'media').length >= 10 ? stream.messages.filter((m) => m.event === 'media') : undefined), 'ten media frames');
    assert.equal(frames.length, 10, '200 ms is ten 20 ms frames');
    assert.deepEqual(
      frames.map((frame) => frame.media.chunk),
      ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'],
    );
    const sequence = frames.map((frame) => Number(frame.sequenceNumber));
    assert.ok(sequence.every((value, index) => index === 0 || value === sequence[index - 1] + 1));
    assert.ok(frames.every((frame) => frame.streamSid === streamSid && frame.media.track === 'inbound'));
    const bytes = Buffer.concat(frames.map((frame) => Buffer.from(frame.media.payload, 'base64')));
    assert.equal(bytes.length, 1600, '160 mu-law bytes per frame');
    const pcm = alawmulaw.mulaw.decode(new Uint8Array(bytes));
    let crossings = 0;
    for (let index = 1; index < pcm.length; index += 1) if (pcm[index - 1] < 0 !== pcm[index] < 0) crossings += 1;
    assert.ok(crossings > 150 && crossings < 200, `a 440 Hz tone crosses zero ~176 times in 200 ms, got ${crossings}`);

    call.pressDigit('7');
    const dtmf = await stream.next('dtmf');
    assert.deepEqual(dtmf.dtmf, { track: 'inbound_track', digit: '7' });
    assert.deepEqual(call.dtmfSent, ['7']);
    await call.hangUp();
  });

  test('agent audio plays in time; a mark is echoed only once the audio before it has played', async () => {
    const { call, stream, streamSid } = await connectedCall('+15005550003');
    let playedWhenEchoed = -1;
    stream.socket.on('message', (data) => {
      if (JSON.parse(String(data)).event === 'mark') playedWhenEchoed = call.agentAudio().length;
    });
    stream.send({ event: 'media', streamSid, media: { payload: mulawTone(400) } });
    stream.send({ event: 'mark', streamSid, mark: { name: 'greeting-done' } });
    await call.waitForAgentAudio();
    const mark = await stream.next('mark');
    assert.deepEqual(mark.mark, { name: 'greeting-done' });
    assert.equal(mark.streamSid, streamSid);
    assert.equal(playedWhenEchoed, 3200, 'all 400 ms (3200 samples) had played when the mark came back');
    await call.waitForAgentQuiet(200);
    assert.deepEqual(call.marksReceived, ['greeting-done']);
    assert.deepEqual(call.marksPlayed, ['greeting-done']);
    const played = call.agentAudio();
    assert.ok(Math.max(...played.map(Math.abs)) > 6000, 'the decoded tone is loud');
    await call.hangUp();
  });

  test('clear drops the queued audio and echoes the pending marks at once', async () => {
    const { call, stream, streamSid } = await connectedCall('+15005550004');
    stream.send({ event: 'media', streamSid, media: { payload: mulawTone(10_000) } });
    stream.send({ event: 'mark', streamSid, mark: { name: 'long-answer' } });
    await call.waitForAgentAudio();
    stream.send({ event: 'clear', streamSid });
    const mark = await stream.next('mark');
    assert.deepEqual(mark.mark, { name: 'long-answer' });
    await until(() => (call.clears === 1 ? true : undefined), 'the clear');
    assert.deepEqual(call.marksPlayed, ['long-answer']);
    assert.ok(call.agentAudio().length < 80_000, 'the rest of the ten seconds never played');
    await call.hangUp();
  });

  test('a busy callee and one who does not answer end the call with that status; no TwiML is requested', async () => {
    for (const answer of ['busy', 'no-answer'] as const) {
      const to = answer === 'busy' ? '+15005550005' : '+15005550006';
      fake.setCallee(to, { answer });
      const created = await client.calls.create({ to, from: OUR_NUMBER, url: platform.url('/voice'), statusCallback: platform.url(`/status/${to}`) });
      const call = await fake.waitForCall(to);
      assert.deepEqual(await call.ended, { status: answer });
      await assert.rejects(call.streamStarted);
      const final = await until(() => platform.received(`/status/${to}`)[0], 'the final status callback');
      assert.equal(final.params.CallStatus, answer);
      assert.equal(final.signatureValid, true);
      assert.equal(platform.received('/voice').filter((request) => request.params.CallSid === created.sid).length, 0);
      assert.equal((await client.calls(created.sid).fetch()).status, answer);
    }
  });

  test('async AMD: the TwiML runs at once and AsyncAmdStatusCallback later reports the machine', async () => {
    const to = '+15005550007';
    fake.setCallee(to, { answer: 'machine', amdDelayMs: 3000 });
    const { call } = await connectedCall(to, { machineDetection: 'DetectMessageEnd', asyncAmd: 'true', asyncAmdStatusCallback: platform.url('/amd') });
    const voice = platform.received('/voice').find((request) => request.params.CallSid === call.sid)!;
    assert.equal(voice.params.AnsweredBy, undefined, 'async AMD does not hold the voice webhook');
    const amd = await until(() => platform.received('/amd').find((request) => request.params.CallSid === call.sid), 'the AMD callback');
    assert.equal(amd.signatureValid, true);
    assert.deepEqual(amd.params, { AccountSid: accountSid, CallSid: call.sid, AnsweredBy: 'machine_end_beep', MachineDetectionDuration: '3000' });
    assert.equal((await client.calls(call.sid).fetch()).answeredBy, 'machine_end_beep');
    await call.hangUp();
  });

  test('async AMD with verdictWhileAgentSpeaks: the verdict waits for the platform to speak, then comes amdDelayMs later', async () => {
    const to = '+15005550010';
    fake.setCallee(to, { answer: 'machine', amdDelayMs: 200, verdictWhileAgentSpeaks: true });
    const { call, stream, streamSid } = await connectedCall(to, { machineDetection: 'DetectMessageEnd', asyncAmd: 'true', asyncAmdStatusCallback: platform.url('/amd') });
    const amdFor = () => platform.received('/amd').find((request) => request.params.CallSid === call.sid);
    // 200 ms of call time is 20 ms here: five times that and still nothing, as the platform said nothing.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(amdFor(), undefined, 'no verdict before the platform speaks');
    stream.send({ event: 'media', streamSid, media: { payload: mulawTone(2000) } });
    await call.waitForAgentAudio();
    const amd = await until(amdFor, 'the AMD callback');
    assert.deepEqual([amd.signatureValid, amd.params.AnsweredBy, amd.params.MachineDetectionDuration], [true, 'machine_end_beep', '200']);
    await call.hangUp();
  });

  test('sync AMD sends AnsweredBy with the voice webhook', async () => {
    const to = '+15005550008';
    fake.setCallee(to, { answer: 'human', amdDelayMs: 800 });
    const { call } = await connectedCall(to, { machineDetection: 'Enable' });
    const voice = platform.received('/voice').find((request) => request.params.CallSid === call.sid)!;
    assert.equal(voice.params.AnsweredBy, 'human');
    await call.hangUp();
  });

  test('calls(sid).update with <Dial> stops the stream and transfers; the call completes later', async () => {
    const { call, stream } = await connectedCall('+15005550009');
    const twiml = '<Response><Dial>+15550001111</Dial></Response>';
    const updated = await client.calls(call.sid).update({ twiml });
    assert.equal(updated.status, 'in-progress');
    await stream.next('stop');
    await stream.closed;
    assert.equal(call.transferredTo(), '+15550001111');
    assert.deepEqual(call.updates, [{ twiml }]);
    assert.deepEqual(await call.ended, { status: 'completed' });
  });

  test('calls(sid).update with status completed hangs up: stop, close, a completed callback with CallDuration', async () => {
    const to = '+15005550010';
    const { call, stream } = await connectedCall(to);
    await client.calls(call.sid).update({ status: 'completed' });
    await stream.next('stop');
    await stream.closed;
    assert.deepEqual(await call.ended, { status: 'completed' });
    const final = await until(() => platform.received(`/status/${to}`)[0], 'the completed callback');
    assert.equal(final.params.CallStatus, 'completed');
    assert.match(final.params.CallDuration, /^\d+$/);
    assert.deepEqual(call.updates, [{ status: 'completed' }]);
    await assert.rejects(client.calls(call.sid).update({ twiml: '<Response/>' }), (error: RestException) => error.status === 400 && error.code === 21220);
  });

  test('numbers: search, buy, list, update, an inbound call to it, release', async () => {
    const offered = await client.availablePhoneNumbers('US').local.list({ areaCode: 415, limit: 5 });
    assert.equal(offered.length, 5);
    assert.ok(offered.every((number) => number.phoneNumber.startsWith('+1415') && number.phoneNumber !== OUR_NUMBER && number.isoCountry === 'US'));
    const wanted = offered[0].phoneNumber;
    const bought = await client.incomingPhoneNumbers.create({ phoneNumber: wanted, voiceUrl: platform.url('/voice-old') });
    assert.match(bought.sid, /^PN[0-9a-f]{32}$/);
    await assert.rejects(client.incomingPhoneNumbers.create({ phoneNumber: wanted }), (error: RestException) => error.status === 400 && error.code === 21422);
    const again = await client.availablePhoneNumbers('US').local.list({ contains: wanted.slice(-4) });
    assert.equal(again.length, 0, 'an owned number is not offered');
    const listed = await client.incomingPhoneNumbers.list({ phoneNumber: wanted });
    assert.deepEqual(listed.map((number) => number.sid), [bought.sid]);

    await client.incomingPhoneNumbers(bought.sid).update({ voiceUrl: platform.url('/voice'), statusCallback: platform.url('/inbound-status') });
    assert.deepEqual(fake.numbers().find((number) => number.sid === bought.sid), { sid: bought.sid, phoneNumber: wanted, voiceUrl: platform.url('/voice'), statusCallback: platform.url('/inbound-status') });
    const call = await fake.placeInboundCall({ from: '+15005550099', to: wanted });
    await call.streamStarted;
    const voice = platform.received('/voice').find((request) => request.params.CallSid === call.sid)!;
    assert.deepEqual([voice.signatureValid, voice.params.Direction, voice.params.CallStatus, voice.params.To], [true, 'inbound', 'ringing', wanted]);
    streamsSeen += 1;
    await call.hangUp();
    const final = await until(() => platform.received('/inbound-status')[0], 'the inbound completed callback');
    assert.equal(final.params.CallStatus, 'completed');

    assert.equal(await client.incomingPhoneNumbers(bought.sid).remove(), true);
    assert.equal(fake.numbers().some((number) => number.sid === bought.sid), false);
    assert.ok(fake.requests.some((request) => request.method === 'DELETE' && request.path.endsWith(`/IncomingPhoneNumbers/${bought.sid}.json`)));
  });

  test('bad credentials are a 401 RestException from the SDK', async () => {
    const intruder = createTwilioClient({ accountSid, authToken: 'wrong', apiBaseUrl: fake.baseUrl });
    await assert.rejects(intruder.calls.create({ to: '+15005550011', from: OUR_NUMBER, url: platform.url('/voice') }), (error: RestException) => {
      assert.ok(error instanceof RestException);
      assert.equal(error.status, 401);
      assert.equal(error.code, 20003);
      return true;
    });
  });
});

describe('fake Twilio behind a proxy', () => {
  test('signs with the public URLs and reaches the platform locally with X-Forwarded headers', async () => {
    const publicBaseUrl = 'https://agents.example.com';
    const platform = await startPlatform({ authToken, publicBaseUrl });
    const fake = await startFakeTwilio({ accountSid, authToken, owned: [OUR_NUMBER], speed: SPEED, proxy: { publicBaseUrl, localBaseUrl: platform.localBaseUrl } });
    try {
      const client = createTwilioClient({ accountSid, authToken, apiBaseUrl: fake.baseUrl });
      await client.calls.create({ to: '+15005550012', from: OUR_NUMBER, url: `${publicBaseUrl}/voice` });
      const call = await fake.waitForCall('+15005550012');
      await call.streamStarted;
      const voice = platform.received('/voice')[0];
      assert.equal(voice.signatureValid, true);
      assert.deepEqual([voice.headers['x-forwarded-proto'], voice.headers['x-forwarded-host']], ['https', 'agents.example.com']);
      const stream = await platform.nextStream();
      assert.equal(stream.signatureValid, true, 'the handshake is signed over wss://agents.example.com/media');
      assert.equal(stream.headers['x-forwarded-proto'], 'https');
      await call.hangUp();
    } finally {
      await fake.close();
      await platform.close();
    }
  });
});
