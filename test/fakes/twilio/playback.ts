import alawmulaw from 'alawmulaw';
import type { Timers } from './support.ts';

// The caller's earpiece. Audio the platform sends on a bidirectional stream is queued and played in
// (scaled) real time; a mark is echoed once everything queued before it has played; a clear drops
// the queued audio and echoes every pending mark at once, as Twilio documents. What has played is
// kept (bounded) so tests can read it and wait for the agent to start or stop speaking.

const SAMPLE_RATE = 8000;
const SAMPLES_PER_MS = SAMPLE_RATE / 1000;
const TICK_MS = 20;
/** Twilio buffers at most ten minutes of outbound audio and discards the rest (its warning 31931). */
const MAX_QUEUED_SAMPLES = 10 * 60 * SAMPLE_RATE;
/** Agent audio kept for agentAudio(): ten minutes; later audio still counts as speech but is not stored. */
const MAX_KEPT_SAMPLES = 10 * 60 * SAMPLE_RATE;
/** A played stretch louder than this (peak, PCM16) is agent speech; mu-law idle noise stays far below. */
const SPEECH_PEAK = 200;

type QueueItem = { kind: 'audio'; samples: Int16Array; offset: number } | { kind: 'mark'; name: string };

export class AgentPlayback {
  private queue: QueueItem[] = [];
  private queuedSamples = 0;
  private kept: Int16Array[] = [];
  private keptSamples = 0;
  /** Every payload received, as it came (bounded as the played audio is). */
  private received: Uint8Array[] = [];
  private receivedBytes = 0;
  private speechSamples = 0;
  /** speechSamples when the last waitForQuiet resolved: waitForSpeech waits for more than this. */
  private speechCursor = 0;
  private lastSpeechAt = Date.now();
  private clockStart = 0;
  private samplesSinceClockStart = 0;
  private cancelTick: (() => void) | undefined;
  private discardWarned = false;
  /** Where played and flushed marks go: the stream currently open (none between streams). */
  markSink: ((name: string) => void) | undefined;
  ended: Error | undefined;

  constructor(
    private readonly timers: Timers,
    private readonly speed: number,
    private readonly warn: (message: string) => void,
  ) {}

  enqueueAudio(mulaw: Uint8Array): void {
    if (this.receivedBytes + mulaw.length <= MAX_KEPT_SAMPLES) {
      this.received.push(mulaw);
      this.receivedBytes += mulaw.length;
    }
    if (this.queuedSamples + mulaw.length > MAX_QUEUED_SAMPLES) {
      if (!this.discardWarned) this.warn('31931: more than ten minutes of audio buffered; the excess is discarded');
      this.discardWarned = true;
      return;
    }
    this.queue.push({ kind: 'audio', samples: alawmulaw.mulaw.decode(mulaw), offset: 0 });
    this.queuedSamples += mulaw.length;
    this.startClock();
  }

  enqueueMark(name: string): void {
    this.queue.push({ kind: 'mark', name });
    this.startClock();
  }

  /** Drops the queued audio; pending marks are echoed at once, in order. */
  clear(): void {
    const marks = this.queue.filter((item) => item.kind === 'mark');
    this.queue = [];
    this.queuedSamples = 0;
    this.stopClock();
    for (const mark of marks) this.markSink?.(mark.name);
  }

  /** The stream closed: nothing queued will play, and no mark can be echoed any more. */
  dropQueue(): void {
    this.queue = [];
    this.queuedSamples = 0;
    this.stopClock();
  }

  audio(): Int16Array {
    const all = new Int16Array(this.keptSamples);
    let at = 0;
    for (const chunk of this.kept) {
      all.set(chunk, at);
      at += chunk.length;
    }
    this.kept = [all];
    return all.slice();
  }

  /** The agent's mu-law as the platform sent it, every payload in order (played, queued or cleared). */
  receivedMulaw(): Uint8Array {
    return new Uint8Array(Buffer.concat(this.received));
  }

  waitForSpeech(timeoutMs: number): Promise<void> {
    return this.timers.waitUntil(
      () => {
        if (this.speechSamples > this.speechCursor) return true;
        if (this.ended) throw this.ended;
        return false;
      },
      timeoutMs,
      'the agent to speak',
    );
  }

  async waitForQuiet(quietMs: number, timeoutMs: number): Promise<void> {
    await this.timers.waitUntil(() => (Date.now() - this.lastSpeechAt) * this.speed >= quietMs, timeoutMs, `${quietMs} ms of agent quiet`);
    this.speechCursor = this.speechSamples;
  }

  stop(reason: Error): void {
    this.ended = reason;
    this.dropQueue();
  }

  private startClock(): void {
    if (this.cancelTick) return;
    this.clockStart = Date.now();
    this.samplesSinceClockStart = 0;
    // Marks with nothing before them are echoed on the next turn of the event loop.
    this.cancelTick = this.timers.after(0, () => this.tick());
  }

  private stopClock(): void {
    this.cancelTick?.();
    this.cancelTick = undefined;
  }

  /** Plays every sample whose time has come since the clock started, echoing marks as they are reached. */
  private tick(): void {
    this.cancelTick = undefined;
    const due = Math.floor((Date.now() - this.clockStart) * this.speed * SAMPLES_PER_MS) - this.samplesSinceClockStart;
    let budget = due;
    while (this.queue.length > 0) {
      const head = this.queue[0];
      if (head.kind === 'mark') {
        this.queue.shift();
        this.markSink?.(head.name);
        continue;
      }
      if (budget <= 0) break;
      const take = Math.min(budget, head.samples.length - head.offset);
      this.play(head.samples.subarray(head.offset, head.offset + take));
      head.offset += take;
      budget -= take;
      this.queuedSamples -= take;
      if (head.offset === head.samples.length) this.queue.shift();
    }
    this.samplesSinceClockStart += due - Math.max(0, budget);
    // An underrun restarts the clock when audio comes again, as a jitter buffer would.
    if (this.queue.length > 0) this.cancelTick = this.timers.after(TICK_MS / this.speed, () => this.tick());
  }

  private play(samples: Int16Array): void {
    let peak = 0;
    for (const sample of samples) peak = Math.max(peak, Math.abs(sample));
    if (peak > SPEECH_PEAK) {
      this.speechSamples += samples.length;
      this.lastSpeechAt = Date.now();
    }
    const room = MAX_KEPT_SAMPLES - this.keptSamples;
    if (room <= 0) return;
    const kept = samples.slice(0, room);
    this.kept.push(kept);
    this.keptSamples += kept.length;
  }
}
