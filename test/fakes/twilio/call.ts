import alawmulaw from 'alawmulaw';
import { resamplePcm16 } from '../../../src/platform/audio/resample.ts';
import type { MediaStream } from './media-stream.ts';
import { AgentPlayback } from './playback.ts';
import { API_VERSION, deferred, friendlyName, newSid, rfc2822, type Timers } from './support.ts';
import type { FakeCall } from './types.ts';
import type { WebhookClient } from './webhook.ts';

// One call as Twilio tracks it: its status and the Call resource JSON, the status callbacks it
// owes, the stream that is open on it, and the FakeCall handle tests drive it through.

export interface FakeContext {
  accountSid: string;
  speed: number;
  timers: Timers;
  webhooks: WebhookClient;
}

export const FINAL_STATUSES = ['completed', 'busy', 'failed', 'no-answer', 'canceled'] as const;
export type FinalStatus = (typeof FINAL_STATUSES)[number];
export type CallStatus = 'queued' | 'ringing' | 'in-progress' | FinalStatus;
export type StatusEvent = 'initiated' | 'ringing' | 'answered' | 'completed';

export interface CallSetup {
  direction: 'outbound-api' | 'inbound';
  to: string;
  from: string;
  phoneNumberSid: string | null;
  /** Status callbacks: only the events asked for, but a final status always (as `completed`). */
  statusCallback: { url: string; method: string; events: Set<string> } | null;
}

const WAIT_AUDIO_MS = 10_000;
const WAIT_QUIET_MS = 30_000;

export class CallRecord {
  readonly sid = newSid('CA');
  status: CallStatus;
  readonly createdAt = new Date();
  updatedAt = new Date();
  startedAt: Date | null = null;
  endedAt: Date | null = null;
  answeredBy: string | null = null;
  transferredTo: string | null = null;
  streamParameters: Record<string, string> = {};
  stream: MediaStream | undefined;
  /** Each TwiML document run gets a number; an update or a hang-up makes older runs stop at their next step. */
  run = 0;
  readonly playback: AgentPlayback;
  readonly streamStarted = deferred<void>();
  readonly ended = deferred<{ status: string }>();
  readonly handle: FakeCall;
  private statusSequence = 0;

  constructor(
    readonly ctx: FakeContext,
    readonly setup: CallSetup,
  ) {
    this.status = setup.direction === 'inbound' ? 'ringing' : 'queued';
    this.playback = new AgentPlayback(ctx.timers, ctx.speed, (message) => this.warn(message));
    this.handle = this.createHandle();
  }

  get final(): boolean {
    return (FINAL_STATUSES as readonly string[]).includes(this.status);
  }

  setStatus(status: CallStatus): void {
    this.status = status;
    this.updatedAt = new Date();
    if (status === 'in-progress') this.startedAt = new Date();
  }

  warn(message: string): void {
    if (this.handle.errors.length < 1000) this.handle.errors.push(message);
  }

  /** The parameters Twilio sends with every voice webhook of this call. */
  webhookParams(): Record<string, string> {
    const { to, from, direction } = this.setup;
    return {
      AccountSid: this.ctx.accountSid,
      ApiVersion: API_VERSION,
      CallSid: this.sid,
      CallStatus: this.status,
      Called: to,
      Caller: from,
      Direction: direction,
      From: from,
      To: to,
    };
  }

  /** Call time since the answer, in whole seconds (scaled by the fake's speed). */
  durationSeconds(): number {
    if (!this.startedAt) return 0;
    const end = this.endedAt ?? new Date();
    return Math.round(((end.getTime() - this.startedAt.getTime()) * this.ctx.speed) / 1000);
  }

  async sendStatusCallback(event: StatusEvent): Promise<void> {
    const callback = this.setup.statusCallback;
    if (!callback) return;
    if (event !== 'completed' && !callback.events.has(event)) return;
    const params: Record<string, string> = {
      ...this.webhookParams(),
      CallStatus: event === 'initiated' ? 'initiated' : this.status,
      CallbackSource: 'call-progress-events',
      SequenceNumber: String(this.statusSequence),
      Timestamp: rfc2822(new Date()),
    };
    this.statusSequence += 1;
    if (event === 'completed') {
      params.CallDuration = String(this.durationSeconds());
      if (this.answeredBy) params.AnsweredBy = this.answeredBy;
    }
    await this.notify(callback.url, callback.method, params);
  }

  /** A status or AMD callback: recorded, sent, and a failure logged as Twilio's debugger would. */
  async notify(url: string, method: string, params: Record<string, string>): Promise<void> {
    this.handle.statusCallbacks.push(params);
    try {
      const answer = await this.ctx.webhooks.send(url, method, params);
      if (answer.status >= 400) this.warn(`11200: callback ${url} answered HTTP ${answer.status}`);
    } catch (error) {
      this.warn(`11200: callback ${url} failed: ${(error as Error).message}`);
    }
  }

  /** Ends the call: the stream gets `stop` and closes, then the final status callback goes out. */
  async finish(status: FinalStatus): Promise<void> {
    if (this.final) return;
    this.run += 1;
    this.setStatus(status);
    this.endedAt = new Date();
    const ending = new Error(`the call ended (${status})`);
    if (!this.streamStarted.settled) this.streamStarted.reject(ending);
    await this.stream?.stop();
    this.playback.stop(ending);
    await this.sendStatusCallback('completed');
    this.ended.resolve({ status });
  }

  /** The Call resource as the REST API shows it. */
  json(): Record<string, unknown> {
    const { to, from, direction, phoneNumberSid } = this.setup;
    const uri = `/${API_VERSION}/Accounts/${this.ctx.accountSid}/Calls/${this.sid}`;
    return {
      sid: this.sid,
      date_created: rfc2822(this.createdAt),
      date_updated: rfc2822(this.updatedAt),
      parent_call_sid: null,
      account_sid: this.ctx.accountSid,
      to,
      to_formatted: friendlyName(to),
      from,
      from_formatted: friendlyName(from),
      phone_number_sid: phoneNumberSid,
      status: this.status,
      start_time: this.startedAt ? rfc2822(this.startedAt) : null,
      end_time: this.endedAt ? rfc2822(this.endedAt) : null,
      duration: this.endedAt ? String(this.durationSeconds()) : null,
      price: null,
      price_unit: 'USD',
      direction,
      answered_by: this.answeredBy,
      api_version: API_VERSION,
      forwarded_from: null,
      group_sid: null,
      caller_name: null,
      queue_time: '0',
      trunk_sid: null,
      uri: `${uri}.json`,
      subresource_uris: {
        notifications: `${uri}/Notifications.json`,
        recordings: `${uri}/Recordings.json`,
        streams: `${uri}/Streams.json`,
        events: `${uri}/Events.json`,
      },
    };
  }

  private openStream(): MediaStream {
    if (!this.stream?.open) throw new Error(`call ${this.sid} has no open media stream`);
    return this.stream;
  }

  private createHandle(): FakeCall {
    const call = this;
    return {
      sid: this.sid,
      status: () => this.status,
      streamStarted: this.streamStarted.promise,
      streamParameters: () => ({ ...this.streamParameters }),
      async say(pcm16k) {
        const stream = call.openStream();
        const pcm8k = await resamplePcm16(pcm16k, 16000, 8000);
        await stream.sendAudio(alawmulaw.mulaw.encode(pcm8k));
      },
      async sayMulaw(mulaw) {
        await call.openStream().sendAudio(mulaw);
      },
      async silence(ms) {
        await call.openStream().sendAudio(new Uint8Array(Math.round(ms * 8)).fill(0xff));
      },
      pressDigit(digit) {
        call.openStream().sendDtmf(digit);
        call.handle.dtmfSent.push(digit);
      },
      agentAudio: () => this.playback.audio(),
      agentMulaw: () => this.playback.receivedMulaw(),
      waitForAgentAudio: (timeoutMs = WAIT_AUDIO_MS) => this.playback.waitForSpeech(timeoutMs),
      waitForAgentQuiet: (quietMs, timeoutMs = WAIT_QUIET_MS) => this.playback.waitForQuiet(quietMs, timeoutMs),
      marksReceived: [],
      marksPlayed: [],
      clears: 0,
      dtmfSent: [],
      updates: [],
      transferredTo: () => this.transferredTo,
      hangUp: () => this.finish('completed'),
      ended: this.ended.promise,
      statusCallbacks: [],
      errors: [],
    };
  }
}
