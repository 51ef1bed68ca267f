import { WebSocket } from 'ws';
import type { AgentPlayback } from './playback.ts';
import { newSid, type Timers } from './support.ts';
import type { WebhookClient } from './webhook.ts';

// One bidirectional Media Stream (<Connect><Stream>), Twilio's side. Twilio dials the WebSocket and
// sends `connected` (no sequence number), then `start`, `media` (inbound track, 160 mu-law bytes per
// 20 ms, base64), `dtmf`, `mark` echoes and finally `stop`; every message after `connected` carries
// a sequenceNumber (a string counting from "1") and the streamSid. From the platform it accepts
// `media`, `mark` and `clear` naming that streamSid.

const FRAME_BYTES = 160;
const FRAME_MS = 20;
const MULAW_SILENCE = 0xff;
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** A bound on one platform message (the fake's own; a 10 MiB message is minutes of audio). */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

export interface MediaStreamOptions {
  url: string;
  parameters: Record<string, string>;
  accountSid: string;
  callSid: string;
  speed: number;
  timers: Timers;
  webhooks: WebhookClient;
  playback: AgentPlayback;
  /** A mark the platform sent, and one the fake echoed back. */
  onMarkReceived(name: string): void;
  onMarkPlayed(name: string): void;
  onClear(): void;
  warn(message: string): void;
}

export class MediaStream {
  readonly streamSid = newSid('MZ');
  private readonly socket: WebSocket;
  private sequence = 0;
  private chunk = 0;
  private lastTimestamp = 0;
  private startedAt = 0;
  /** Caller audio goes out one utterance after another, never interleaved. */
  private outgoing: Promise<void> = Promise.resolve();
  private stopped = false;
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;

  constructor(private readonly options: MediaStreamOptions) {
    const handshake = options.webhooks.websocketHandshake(options.url);
    this.socket = new WebSocket(handshake.url, { headers: handshake.headers, handshakeTimeout: HANDSHAKE_TIMEOUT_MS, maxPayload: MAX_MESSAGE_BYTES });
    this.opened = new Promise((resolve, reject) => {
      this.socket.once('open', () => {
        this.begin();
        resolve();
      });
      this.socket.once('error', (error) => reject(new Error(`31920: stream WebSocket handshake failed: ${error.message}`)));
    });
    this.opened.catch(() => undefined);
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.socket.on('message', (data, binary) => this.receive(data as Buffer, binary));
    this.socket.on('error', () => undefined);
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN && !this.stopped;
  }

  /** Paced caller audio: one 20 ms `media` message per frame, resolved when the last is sent. */
  sendAudio(mulaw: Uint8Array): Promise<void> {
    const sending = this.outgoing.then(() => this.pace(mulaw));
    this.outgoing = sending.catch(() => undefined);
    return sending;
  }

  sendDtmf(digit: string): void {
    this.send({ event: 'dtmf', streamSid: this.streamSid, sequenceNumber: this.nextSequence(), dtmf: { track: 'inbound_track', digit } });
  }

  /** Twilio ends the stream: `stop`, then the socket closes. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.options.playback.markSink = undefined;
    this.options.playback.dropQueue();
    if (this.socket.readyState === WebSocket.OPEN) {
      const { accountSid, callSid } = this.options;
      this.send({ event: 'stop', sequenceNumber: this.nextSequence(), streamSid: this.streamSid, stop: { accountSid, callSid } }, true);
      this.socket.close(1000);
    } else if (this.socket.readyState === WebSocket.CONNECTING) this.socket.terminate();
    else return;
    await Promise.race([this.closed, this.options.timers.sleep(1000)]);
    this.socket.terminate();
  }

  /** close() of the whole fake: no goodbye. */
  terminate(): void {
    this.stopped = true;
    this.socket.terminate();
  }

  private begin(): void {
    this.startedAt = Date.now();
    const { playback, accountSid, callSid, parameters } = this.options;
    playback.markSink = (name) => {
      this.send({ event: 'mark', sequenceNumber: this.nextSequence(), streamSid: this.streamSid, mark: { name } });
      this.options.onMarkPlayed(name);
    };
    this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    this.send({
      event: 'start',
      sequenceNumber: this.nextSequence(),
      start: {
        accountSid,
        streamSid: this.streamSid,
        callSid,
        tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        customParameters: parameters,
      },
      streamSid: this.streamSid,
    });
  }

  private async pace(mulaw: Uint8Array): Promise<void> {
    const frames = Math.ceil(mulaw.length / FRAME_BYTES);
    const begun = Date.now();
    for (let index = 0; index < frames && this.open; index += 1) {
      const frame = new Uint8Array(FRAME_BYTES).fill(MULAW_SILENCE);
      frame.set(mulaw.subarray(index * FRAME_BYTES, (index + 1) * FRAME_BYTES));
      this.sendMediaFrame(frame);
      // Scheduled from the start so that timer lateness does not pile up into drift.
      const next = begun + ((index + 1) * FRAME_MS) / this.options.speed;
      await this.options.timers.sleep(next - Date.now());
    }
  }

  private sendMediaFrame(frame: Uint8Array): void {
    // The timestamp is call time since the stream started, in ms, never going backwards.
    this.lastTimestamp = Math.max(this.lastTimestamp, Math.round((Date.now() - this.startedAt) * this.options.speed));
    this.chunk += 1;
    this.send({
      event: 'media',
      sequenceNumber: this.nextSequence(),
      media: { track: 'inbound', chunk: String(this.chunk), timestamp: String(this.lastTimestamp), payload: Buffer.from(frame).toString('base64') },
      streamSid: this.streamSid,
    });
  }

  private nextSequence(): string {
    this.sequence += 1;
    return String(this.sequence);
  }

  private send(message: object, evenIfStopped = false): void {
    if (this.socket.readyState !== WebSocket.OPEN || (this.stopped && !evenIfStopped)) return;
    this.socket.send(JSON.stringify(message));
  }

  private receive(data: Buffer, binary: boolean): void {
    const { warn } = this.options;
    if (binary) {
      warn('31950: a binary WebSocket message was ignored; Media Streams messages are JSON text');
      return;
    }
    let message: { event?: unknown; streamSid?: unknown; media?: { payload?: unknown }; mark?: { name?: unknown } };
    try {
      message = JSON.parse(data.toString('utf8'));
    } catch {
      warn('31950: a WebSocket message that is not JSON was ignored');
      return;
    }
    if (this.stopped) return;
    if (message.streamSid !== this.streamSid) {
      warn(`a '${String(message.event)}' message for streamSid ${String(message.streamSid)} was ignored`);
      return;
    }
    this.handle(message);
  }

  private handle(message: { event?: unknown; media?: { payload?: unknown }; mark?: { name?: unknown } }): void {
    const { playback, warn } = this.options;
    if (message.event === 'media' && typeof message.media?.payload === 'string') {
      playback.enqueueAudio(new Uint8Array(Buffer.from(message.media.payload, 'base64')));
    } else if (message.event === 'mark' && typeof message.mark?.name === 'string') {
      this.options.onMarkReceived(message.mark.name);
      playback.enqueueMark(message.mark.name);
    } else if (message.event === 'clear') {
      this.options.onClear();
      playback.clear();
    } else {
      warn(`31924: unsupported or malformed '${String(message.event)}' message ignored`);
    }
  }
}
