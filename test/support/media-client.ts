import assert from 'node:assert/strict';
import WebSocket, { type RawData } from 'ws';

// A client of the built-in media WebSocket (/v1/media/stream) for tests: what the server sent
// (audio frames, control messages), a way to wait for one, and caller audio paced in real time.

export function connectMedia(port: number, token: string) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/media/stream?token=${encodeURIComponent(token)}`);
  const messages: Array<Record<string, unknown>> = [];
  let audioBytes = 0;
  const waiters: Array<() => void> = [];
  socket.on('message', (data: RawData, isBinary: boolean) => {
    if (isBinary) audioBytes += (data as Buffer).length;
    else messages.push(JSON.parse(data.toString()));
    for (const waiter of waiters.splice(0)) waiter();
  });
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  const until = async (predicate: () => boolean, what: string, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; got ${JSON.stringify(messages)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  };
  const opened = new Promise<void>((resolve, reject) => {
    socket.on('open', () => resolve());
    socket.on('error', reject);
  });
  return { socket, messages, audio: () => audioBytes, until, closed, opened };
}

/** Sends PCM16 16 kHz audio in 20 ms frames, paced in real time, then `silenceMs` of silence. */
export async function sendPaced(socket: WebSocket, pcm: Int16Array, silenceMs = 800) {
  const all = new Int16Array(pcm.length + (silenceMs / 1000) * 16_000);
  all.set(pcm);
  for (let at = 0; at < all.length; at += 320) {
    socket.send(Buffer.from(all.buffer, all.byteOffset + at * 2, Math.min(320, all.length - at) * 2));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The transcript lines of `role` the server sent, in order. */
export const transcriptLines = (messages: Array<Record<string, unknown>>, role: string) => messages.filter((m) => m.type === 'transcript' && m.role === role).map((m) => m.text);
