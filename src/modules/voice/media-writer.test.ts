import assert from 'node:assert/strict';
import fs from 'node:fs';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { createMediaSocketStream } from './media-socket.ts';
import { createMediaWriter } from './media-writer.ts';

// The media writer's thread over real sockets: a WebSocket client reads what the thread wrote to
// the server side's descriptor. Frames leave no earlier than their time and in order, text at
// once, a drop takes back what was not yet due, a peer that stops reading is cut off, and a
// closed socket's descriptor number, taken by the next connection, gets nothing meant for the old one.

const writer = createMediaWriter({ onError: (error) => assert.fail(error) });
const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
await new Promise((resolve) => server.once('listening', resolve));
after(async () => {
  server.close();
  await writer.close();
});
const url = `ws://127.0.0.1:${(server.address() as net.AddressInfo).port}`;

/** A connected pair: the server side's WebSocket and TCP socket, and a client recording what it receives. */
async function pair() {
  const accepted = new Promise<{ socket: WebSocket; tcp: net.Socket }>((resolve) => server.once('connection', (socket, request) => resolve({ socket, tcp: request.socket })));
  const client = new WebSocket(url);
  const received: Array<{ at: number; binary: boolean; data: Buffer }> = [];
  client.on('message', (data, binary) => received.push({ at: performance.now(), binary, data: data as Buffer }));
  await new Promise((resolve) => client.once('open', resolve));
  return { client, received, ...(await accepted) };
}

async function until(check: () => boolean, what: string, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const frame = (value: number) => new Uint8Array(new Int16Array(320).fill(value).buffer);

describe('media writer', () => {
  it('writes each frame no earlier than its time and in order, text at once, and counts the frames', async () => {
    const { client, received, tcp } = await pair();
    const channel = writer.attach(tcp, { maxBufferedBytes: 64 * 1024 });
    assert.ok(channel, 'a plain TCP socket is taken');
    // The thread starts with the first channel; its first message says it is up.
    channel.sendText('warm-up');
    await until(() => received.length === 1, 'the thread');
    await writer.stats();
    const handedAt = performance.now();
    for (let i = 0; i < 5; i++) channel.sendBinary(frame(i), 100 + 20 * i);
    channel.sendText(JSON.stringify({ type: 'transcript' }));
    await until(() => received.length === 7, 'five frames and a text');
    assert.equal(received[1].binary, false, 'the text went out before the frames due later');
    const frames = received.slice(2);
    frames.forEach((message, i) => {
      assert.ok(message.binary && message.data.length === 640 && message.data.readInt16LE(0) === i, `frame ${i} in its place`);
      assert.ok(message.at >= handedAt + 100 + 20 * i - 1, `frame ${i} not before its time`);
    });
    const stats = await writer.stats();
    assert.equal(stats?.frames, 5);
    assert.equal(stats?.lateness.reduce((a, b) => a + b, 0), 5);
    client.close();
  });

  it('a drop takes back the frames not yet due; release lets go of the socket after the messages handed over', async () => {
    const { client, received, tcp } = await pair();
    const channel = writer.attach(tcp, { maxBufferedBytes: 64 * 1024 });
    assert.ok(channel);
    channel.sendBinary(frame(1), 0);
    for (let i = 0; i < 5; i++) channel.sendBinary(frame(2), 5000 + i * 20);
    await until(() => received.length === 1, 'the frame due now');
    channel.dropQueued();
    channel.sendText('{"type":"clear"}');
    await channel.release();
    channel.sendBinary(frame(3), 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(
      received.map((m) => (m.binary ? m.data.readInt16LE(0) : m.data.toString())),
      [1, '{"type":"clear"}'],
      'the dropped frames and anything after the release never went out',
    );
    assert.equal(writer.channels, 0, 'the slot is free again');
    client.close();
  });

  it('a peer that stops reading is cut off once the unsent bytes pass the bound', async () => {
    const { client, tcp } = await pair();
    (client as unknown as { _socket: net.Socket })._socket.pause();
    const channel = writer.attach(tcp, { maxBufferedBytes: 64 * 1024 });
    assert.ok(channel);
    let sent = 0;
    while (!channel.failed && sent < 200_000) {
      channel.sendBinary(frame(0), 0);
      if (++sent % 200 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.ok(channel.failed, `cut off (after ${sent} frames)`);
    client.terminate();
  });

  it('a socket closed with frames still queued: the next connection on its descriptor number gets none of them', async () => {
    const first = await pair();
    const fd = (first.tcp as unknown as { _handle: { fd: number } })._handle.fd;
    const channel = writer.attach(first.tcp, { maxBufferedBytes: 64 * 1024 });
    assert.ok(channel);
    for (let i = 0; i < 50; i++) channel.sendBinary(frame(7), 30 + i * 2);
    // Closed at once by the event loop's side (as when its peer resets): the descriptor goes now.
    first.tcp.destroy();
    first.client.terminate();
    const second = await pair();
    const secondFd = (second.tcp as unknown as { _handle: { fd: number } })._handle.fd;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(second.received, [], `nothing written to the new socket (descriptor ${secondFd}, the old one was ${fd})`);
    assert.equal(channel.failed, false);
    await channel.release();
    second.client.close();
  });

  it('the thread writes nothing after the socket closed, though its release has not reached it yet (the close fences)', async () => {
    const { client, received, tcp } = await pair();
    const fd = (tcp as unknown as { _handle: { fd: number } })._handle.fd;
    const channel = writer.attach(tcp, { maxBufferedBytes: 64 * 1024 });
    assert.ok(channel);
    channel.sendText('up');
    await until(() => received.length === 1, 'the channel open in the thread');
    for (let i = 0; i < 40; i++) channel.sendBinary(frame(7), 20 + i * 5);
    await new Promise((resolve) => setImmediate(resolve));
    tcp.destroy();
    // The descriptor number goes to a file at once; then the event loop is held, so the release
    // (sent at the end of this turn) cannot reach the thread while those frames fall due.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-writer-'));
    const opened: number[] = [];
    for (let i = 0; i < 20 && !opened.includes(fd); i++) opened.push(fs.openSync(path.join(dir, `f${i}`), 'w'));
    const holdUntil = performance.now() + 300;
    while (performance.now() < holdUntil);
    const reused = opened.indexOf(fd);
    for (const other of opened) fs.closeSync(other);
    assert.ok(reused >= 0, `descriptor ${fd} was opened again for the file`);
    assert.equal(fs.statSync(path.join(dir, `f${reused}`)).size, 0, 'nothing written into the file that took its number');
    fs.rmSync(dir, { recursive: true, force: true });
    await channel.release();
    client.terminate();
  });

  it('the media socket stream goes through the writer: a lead for the speaker, audio and text out, end then close', async () => {
    const { client, received, socket, tcp } = await pair();
    const stream = createMediaSocketStream(socket, { writer: { writer, socket: tcp, leadMs: 100 } });
    assert.equal(stream.leadMs, 100);
    assert.equal(stream.send(new Int16Array(320).fill(9), 0), true);
    stream.transcript?.({ role: 'agent', text: 'Hello' });
    const closed = new Promise<number>((resolve) => client.once('close', resolve));
    stream.end('api_end');
    assert.equal(await closed, 1000);
    const texts = received.filter((m) => !m.binary).map((m) => JSON.parse(m.data.toString()));
    assert.deepEqual(texts, [
      { type: 'transcript', role: 'agent', text: 'Hello', final: true },
      { type: 'end', reason: 'api_end' },
    ]);
    assert.equal(received.filter((m) => m.binary && m.data.readInt16LE(0) === 9).length, 1);
  });
});
