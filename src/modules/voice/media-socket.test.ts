import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { createMediaSocketStream, protocolReason } from './media-socket.ts';

// The built-in media socket over a real WebSocket pair: audio re-cut into 20 ms frames, text turns,
// and a client that stops reading is cut off (send answers false) instead of being buffered forever.

const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
await new Promise((resolve) => server.once('listening', resolve));
after(() => server.close());
const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;

async function pair() {
  const accepted = new Promise<WebSocket>((resolve) => server.once('connection', resolve));
  const client = new WebSocket(url);
  await new Promise((resolve) => client.once('open', resolve));
  return { client, serverSide: await accepted };
}

describe('media socket', () => {
  it('re-cuts audio of any chunk size into 320-sample frames and passes typed text', async () => {
    const { client, serverSide } = await pair();
    const stream = createMediaSocketStream(serverSide);
    const frames: Int16Array[] = [];
    const texts: string[] = [];
    stream.onFrame((frame) => frames.push(frame));
    stream.onText?.((text) => texts.push(text));
    const audio = Int16Array.from({ length: 1000 }, (_, i) => i);
    client.send(Buffer.from(audio.buffer, 0, 701 * 2 + 1)); // not a whole frame, and an odd byte
    client.send(Buffer.from(audio.buffer, 701 * 2, 299 * 2));
    client.send(JSON.stringify({ type: 'text', text: 'Hello there' }));
    client.send('not json');
    const replies: string[] = [];
    client.on('message', (data, binary) => !binary && replies.push(data.toString()));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(frames.map((f) => f.length), [320, 320, 320]);
    assert.deepEqual(Array.from(frames[2].subarray(0, 3)), [640, 641, 642], 'samples in order across chunks');
    assert.deepEqual(texts, ['Hello there']);
    assert.equal(JSON.parse(replies[0]).type, 'error');
    client.close();
  });

  it('whole-frame messages arriving in bursts: each frame kept holds its own samples (frames are views of the messages)', async () => {
    const { client, serverSide } = await pair();
    const stream = createMediaSocketStream(serverSide);
    const frames: Int16Array[] = [];
    stream.onFrame((frame) => frames.push(frame));
    // Many frames, each of its own value, sent in bursts so several arrive in one read.
    for (let burst = 0; burst < 20; burst++) {
      for (let i = 0; i < 10; i++) client.send(Buffer.from(new Int16Array(320).fill(burst * 10 + i).buffer));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const deadline = Date.now() + 5000;
    while (frames.length < 200 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(frames.length, 200);
    for (const [i, frame] of frames.entries()) assert.ok(frame.length === 320 && frame.every((sample) => sample === i), `frame ${i} holds its own samples`);
    client.close();
  });

  it('a client that stops reading is cut off: send answers false once the bound is reached', async () => {
    const { client, serverSide } = await pair();
    const stream = createMediaSocketStream(serverSide, { maxBufferedBytes: 64 * 1024 });
    // The client's socket stops reading: TCP buffers fill, then the server's send buffer.
    (client as unknown as { _socket: { pause(): void } })._socket.pause();
    const frame = new Int16Array(320);
    let sent = 0;
    while (stream.send(frame) && sent < 100_000) {
      sent++;
      if (sent % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    assert.ok(sent < 100_000, 'refused before 100,000 frames (32 MB)');
    assert.ok(serverSide.bufferedAmount > 64 * 1024);
    client.terminate();
  });

  it('names how a session ended as the protocol does', () => {
    assert.deepEqual(
      ['api_hangup', 'silence_timeout', 'max_duration', 'insufficient_balance', 'customer_hangup', 'caller_goodbye', 'agent_end_call'].map(protocolReason),
      ['api_end', 'idle_timeout', 'max_duration', 'insufficient_balance', 'client_closed', 'agent_end_call', 'agent_end_call'],
    );
  });
});
