import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AudioSource, dispose } from '@livekit/rtc-node';
import { decodeJwt } from 'jose';
import { AccessToken, RoomServiceClient, ServerError } from 'livekit-server-sdk';
import { concatPcm } from '../../platform/audio/frames.ts';
import { createInboundConverter, createOutboundConverter, createPlayout, downmixToMono, type PcmFrame } from './livekit-audio.ts';
import { startFakeLiveKit } from '../../../test/fakes/livekit.ts';
import { createLiveKitMedia, LiveKitApiError } from './livekit.ts';

// The LiveKit adapter through the real livekit-server-sdk against a local server speaking the
// RoomService's Twirp JSON (its URL is ws://, as LIVEKIT_URL is: the SDK must find the HTTP host);
// then the audio bridge's conversions and playout, in-process (a real AudioSource, no room).

const credentials = { apiKey: 'APItestkey', apiSecret: 'test-secret-of-at-least-32-characters' };
const fake = await startFakeLiveKit(credentials);
const media = createLiveKitMedia({ url: fake.url, ...credentials, timeoutMs: 2000 });
after(async () => {
  await fake.close();
  // The rtc-node FFI keeps the process alive until disposed.
  await dispose();
});

const isRefusal = (status: number, code: string) => (error: unknown) => {
  assert.ok(error instanceof LiveKitApiError || error instanceof ServerError, String(error));
  assert.deepEqual({ status: error.status, code: error.code }, { status, code });
  return true;
};

describe('LiveKit rooms', () => {
  it('creates a room with its bounds (twice is fine), lists it, deletes it (a missing room too)', async () => {
    await media.createRoom('vs_rooms', { emptyTimeoutSeconds: 120, maxParticipants: 2 });
    await media.createRoom('vs_rooms', { emptyTimeoutSeconds: 120, maxParticipants: 2 });
    const created = fake.rooms().filter((room) => room.name === 'vs_rooms');
    assert.deepEqual(created.map(({ name, emptyTimeout, maxParticipants }) => ({ name, emptyTimeout, maxParticipants })), [{ name: 'vs_rooms', emptyTimeout: 120, maxParticipants: 2 }]);
    const create = fake.requests.findLast((request) => request.method === 'CreateRoom');
    assert.deepEqual({ status: create?.status, roomCreate: create?.grant?.['roomCreate'] }, { status: 200, roomCreate: true });

    const listed = await new RoomServiceClient(fake.url, credentials.apiKey, credentials.apiSecret).listRooms();
    assert.ok(listed.some((room) => room.name === 'vs_rooms' && room.emptyTimeout === 120 && room.maxParticipants === 2));

    await media.deleteRoom('vs_rooms');
    assert.equal(fake.rooms().some((room) => room.name === 'vs_rooms'), false);
    await media.deleteRoom('vs_rooms');
    assert.deepEqual(fake.requests.at(-1), { method: 'DeleteRoom', status: 404, grant: { roomCreate: true }, body: { room: 'vs_rooms' } });
  });

  it('mints a token that verifies with its identity and room, and grants joining that room only', async () => {
    const token = await media.mintToken({ roomName: 'vs_token', identity: 'user-42', ttlSeconds: 600 });
    assert.deepEqual(await media.verifyToken(token), { identity: 'user-42', roomName: 'vs_token' });

    const claims = decodeJwt(token);
    assert.deepEqual({ iss: claims.iss, sub: claims.sub, ttl: (claims.exp ?? 0) - (claims.nbf ?? 0) }, { iss: credentials.apiKey, sub: 'user-42', ttl: 600 });
    assert.deepEqual(claims['video'], { roomJoin: true, room: 'vs_token', canPublish: true, canSubscribe: true });

    // Presented to the RoomService, the client's token manages nothing.
    const asClient = new RoomServiceClient(fake.url, undefined, undefined, { token });
    await assert.rejects(asClient.listRooms(), isRefusal(401, 'unauthenticated'));
    await assert.rejects(asClient.createRoom({ name: 'vs_intruder' }), isRefusal(401, 'unauthenticated'));
    assert.equal(fake.rooms().some((room) => room.name === 'vs_intruder'), false);
  });

  it('verifies nothing signed with another secret or key, without a room grant, or malformed', async () => {
    const grant = { roomName: 'vs_verify', identity: 'user-7', ttlSeconds: 600 };
    const other = createLiveKitMedia({ url: fake.url, apiKey: credentials.apiKey, apiSecret: 'another-secret-of-at-least-32-chars' });
    assert.equal(await media.verifyToken(await other.mintToken(grant)), null);
    assert.equal(await other.verifyToken(await media.mintToken(grant)), null);
    const otherKey = createLiveKitMedia({ url: fake.url, apiKey: 'APIotherkey', apiSecret: credentials.apiSecret });
    assert.equal(await media.verifyToken(await otherKey.mintToken(grant)), null);

    // A server token (what the SDK signs for its own calls) carries no room to join.
    const server = new AccessToken(credentials.apiKey, credentials.apiSecret, { ttl: 600 });
    server.addGrant({ roomList: true, roomCreate: true });
    assert.equal(await media.verifyToken(await server.toJwt()), null);
    const admin = new AccessToken(credentials.apiKey, credentials.apiSecret, { identity: 'user-7', ttl: 600 });
    admin.addGrant({ roomAdmin: true, room: 'vs_verify' });
    assert.equal(await media.verifyToken(await admin.toJwt()), null, 'a grant to administer the room is not one to join it');
    assert.equal(await media.verifyToken('not.a.jwt'), null);

    // A TTL of 0 would mean the SDK's default (6 hours): refused.
    await assert.rejects(media.mintToken({ ...grant, ttlSeconds: 0 }), RangeError);
  });

  it('stops verifying a token once it expires', async () => {
    const strict = createLiveKitMedia({ url: fake.url, ...credentials, clockToleranceSeconds: 0 });
    // Two seconds: `exp` is in whole seconds, so a one-second token may already be over when checked.
    const token = await strict.mintToken({ roomName: 'vs_expiry', identity: 'user-9', ttlSeconds: 2 });
    assert.deepEqual(await strict.verifyToken(token), { identity: 'user-9', roomName: 'vs_expiry' });
    const expiresAt = (decodeJwt(token).exp ?? 0) * 1000;
    await sleep(Math.max(0, expiresAt - Date.now()) + 50);
    assert.equal(await strict.verifyToken(token), null);
  });

  it('health: reachable with a latency; unreachable when the server is gone or silent', async () => {
    const own = await startFakeLiveKit(credentials);
    const provider = createLiveKitMedia({ url: own.url, ...credentials, timeoutMs: 2000 });
    const up = await provider.health();
    assert.deepEqual({ ...up, latency_ms: typeof up.latency_ms }, { provider: 'livekit', configured: true, reachable: true, latency_ms: 'number' });
    assert.ok((up.latency_ms ?? -1) >= 0);
    assert.deepEqual(own.requests.at(-1)?.method, 'ListRooms');

    await own.close();
    assert.deepEqual(await provider.health(), { provider: 'livekit', configured: true, reachable: false, latency_ms: null });

    // Accepts the connection and never answers: the time-out decides.
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const stalled = createLiveKitMedia({ url: `ws://127.0.0.1:${port}`, ...credentials, timeoutMs: 300 });
    assert.deepEqual(await stalled.health(), { provider: 'livekit', configured: true, reachable: false, latency_ms: null });
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('with a wrong API secret (or key) the server refuses (401) and the adapter says so', async () => {
    const wrong = createLiveKitMedia({ url: fake.url, apiKey: credentials.apiKey, apiSecret: 'wrong-secret-of-at-least-32-characters' });
    await assert.rejects(wrong.createRoom('vs_wrong', { emptyTimeoutSeconds: 60, maxParticipants: 2 }), isRefusal(401, 'unauthenticated'));
    assert.deepEqual({ method: fake.requests.at(-1)?.method, status: fake.requests.at(-1)?.status }, { method: 'CreateRoom', status: 401 });
    assert.equal(fake.rooms().some((room) => room.name === 'vs_wrong'), false);
    await assert.rejects(wrong.deleteRoom('vs_rooms'), isRefusal(401, 'unauthenticated'));
    assert.equal((await wrong.health()).reachable, false);

    const unknownKey = createLiveKitMedia({ url: fake.url, apiKey: 'APIunknown', apiSecret: credentials.apiSecret });
    await assert.rejects(unknownKey.createRoom('vs_wrong', { emptyTimeoutSeconds: 60, maxParticipants: 2 }), isRefusal(401, 'unauthenticated'));
    assert.equal(fake.rooms().some((room) => room.name === 'vs_wrong'), false);
  });
});

const TONE_HZ = 440;
const AMPLITUDE = 8000;

/** `seconds` of a tone as 48 kHz frames of 10 ms; `right` scales the right channel (stereo when given). */
function toneFrames(seconds: number, right?: number): PcmFrame[] {
  const channels = right === undefined ? 1 : 2;
  const samplesPerChannel = 480;
  const frames: PcmFrame[] = [];
  for (let index = 0; index < seconds * 100; index++) {
    const data = new Int16Array(samplesPerChannel * channels);
    for (let i = 0; i < samplesPerChannel; i++) {
      const value = Math.round(AMPLITUDE * Math.sin((2 * Math.PI * TONE_HZ * (index * samplesPerChannel + i)) / 48_000));
      data[i * channels] = value;
      if (channels === 2) data[i * channels + 1] = Math.round(value * (right ?? 1));
    }
    frames.push({ data, sampleRate: 48_000, channels, samplesPerChannel });
  }
  return frames;
}

/** The tone's frequency, from its sign changes (two per period). */
function frequencyOf(pcm: Int16Array, sampleRate: number): number {
  let crossings = 0;
  for (let i = 1; i < pcm.length; i++) if (pcm[i - 1] < 0 !== pcm[i] < 0) crossings++;
  return crossings / 2 / (pcm.length / sampleRate);
}

const peak = (pcm: Int16Array) => pcm.reduce((max, sample) => Math.max(max, Math.abs(sample)), 0);

describe('LiveKit audio conversion', () => {
  it('turns 48 kHz stereo 10 ms frames into 16 kHz mono 20 ms frames of the same tone, and back', async () => {
    const inbound = await createInboundConverter(48_000, 2);
    const runtimeFrames = toneFrames(2, 1).flatMap((frame) => inbound.push(frame));
    inbound.close();
    // Two seconds are 100 runtime frames; the resampler's filter delay holds back part of the last.
    assert.ok(runtimeFrames.length === 99 || runtimeFrames.length === 100, `${runtimeFrames.length} frames`);
    assert.ok(runtimeFrames.every((frame) => frame.length === 320));
    const pcm16k = concatPcm(runtimeFrames.slice(1));
    assert.ok(Math.abs(frequencyOf(pcm16k, 16_000) - TONE_HZ) < TONE_HZ * 0.01, `${frequencyOf(pcm16k, 16_000)} Hz`);
    assert.ok(Math.abs(peak(pcm16k) - AMPLITUDE) < AMPLITUDE * 0.05, `peak ${peak(pcm16k)}`);

    const outbound = await createOutboundConverter(48_000);
    const livekitFrames = runtimeFrames.flatMap((frame) => outbound.push(frame));
    outbound.close();
    assert.ok(Math.abs(livekitFrames.length - runtimeFrames.length * 2) <= 1, `${livekitFrames.length} frames`);
    for (const frame of livekitFrames) assert.deepEqual({ ...frame, data: frame.data.length }, { data: 480, sampleRate: 48_000, channels: 1, samplesPerChannel: 480 });
    const pcm48k = concatPcm(livekitFrames.slice(2).map((frame) => frame.data));
    assert.ok(Math.abs(frequencyOf(pcm48k, 48_000) - TONE_HZ) < TONE_HZ * 0.01, `${frequencyOf(pcm48k, 48_000)} Hz`);
    assert.ok(Math.abs(peak(pcm48k) - AMPLITUDE) < AMPLITUDE * 0.05, `peak ${peak(pcm48k)}`);
  });

  it('downmixes by averaging the channels, and refuses a frame of another format', async () => {
    const [opposite] = toneFrames(0.01, -1);
    assert.equal(peak(downmixToMono(opposite)), 0);
    const [leftOnly] = toneFrames(0.01, 0);
    assert.ok(Math.abs(peak(downmixToMono(leftOnly)) - AMPLITUDE / 2) <= 1);
    const inbound = await createInboundConverter(48_000, 2);
    assert.throws(() => inbound.push(toneFrames(0.01)[0]), RangeError);
    inbound.close();
  });
});

/** A real AudioSource, counting the frames handed to it. */
function countingSink(source: AudioSource) {
  return {
    captured: 0,
    captureFrame(frame: Parameters<AudioSource['captureFrame']>[0]) {
      this.captured++;
      return source.captureFrame(frame);
    },
    clearQueue: () => source.clearQueue(),
    get queuedDuration() {
      return source.queuedDuration;
    },
  };
}

const silence = (count: number): PcmFrame[] => Array.from({ length: count }, () => ({ data: new Int16Array(480), sampleRate: 48_000, channels: 1, samplesPerChannel: 480 }));

describe('LiveKit playout (a real AudioSource, outside any room)', () => {
  it('reports a mark once the audio before it is captured; clear drops the queued audio and reports its marks', async () => {
    const source = new AudioSource(48_000, 1, 100);
    const sink = countingSink(source);
    const marks: Array<{ name: string; captured: number }> = [];
    const errors: Error[] = [];
    const playout = createPlayout(sink, (name) => marks.push({ name, captured: sink.captured }), (error) => errors.push(error));

    playout.enqueue(silence(20));
    playout.mark('first');
    while (marks.length === 0) await sleep(10);
    assert.deepEqual(marks, [{ name: 'first', captured: 20 }]);

    playout.enqueue(silence(100));
    playout.mark('second');
    assert.ok(playout.queuedMs() >= 990, `${playout.queuedMs()} ms queued`);
    playout.clear();
    assert.deepEqual(marks.at(-1), { name: 'second', captured: 21 });
    await sleep(100);
    assert.equal(sink.captured, 21, 'only the frame already being captured went out');
    assert.deepEqual(errors, []);
    playout.close();
    await source.close();
  });

  it('on clear, reports at once a mark whose audio is captured but still playing', async () => {
    // A source buffer of 2 s takes the second of audio at once; it then plays for a second.
    const source = new AudioSource(48_000, 1, 2000);
    const sink = countingSink(source);
    const marks: string[] = [];
    const playout = createPlayout(sink, (name) => marks.push(name), (error) => assert.fail(error));
    playout.enqueue(silence(100));
    playout.mark('tail');
    while (sink.captured < 100) await sleep(5);
    await sleep(20);
    assert.deepEqual(marks, [], 'still playing');
    playout.clear();
    assert.deepEqual(marks, ['tail']);
    playout.close();
    await source.close();
  });
});
