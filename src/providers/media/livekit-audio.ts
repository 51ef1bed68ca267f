import { AudioFrame, AudioSource, AudioStream, DisconnectReason, LocalAudioTrack, type RemoteTrack, Room, RoomEvent, TrackKind, TrackPublishOptions, TrackSource } from '@livekit/rtc-node';
import { FRAME_SAMPLES, SAMPLE_RATE } from '../../platform/audio/frames.ts';
import { createResampler } from '../../platform/audio/resample.ts';
import type { MediaCloseReason, MediaStream } from '../../ports/media.ts';

// The agent's side of a LiveKit room as the runtime's MediaStream. LiveKit hands over decoded
// audio as PCM16 frames of 10 ms, typically 48 kHz (mono or interleaved stereo); the runtime
// speaks 16 kHz mono in frames of 20 ms. The converters and the playout queue are plain code,
// testable in-process; joinLiveKitRoom only wires them to @livekit/rtc-node's Room.

export const LIVEKIT_SAMPLE_RATE = 48_000;
export const LIVEKIT_FRAME_MS = 10;

/** The shape of @livekit/rtc-node's AudioFrame: `data` interleaves the channels. */
export interface PcmFrame {
  data: Int16Array;
  sampleRate: number;
  channels: number;
  samplesPerChannel: number;
}

/** Averages the channels of an interleaved frame into one (a mono frame is returned as is). */
export function downmixToMono(frame: PcmFrame): Int16Array {
  const { data, channels, samplesPerChannel } = frame;
  if (data.length < channels * samplesPerChannel) throw new RangeError(`the frame holds ${data.length} samples, not ${channels} × ${samplesPerChannel}`);
  if (channels === 1) return data.subarray(0, samplesPerChannel);
  const mono = new Int16Array(samplesPerChannel);
  for (let i = 0; i < samplesPerChannel; i++) {
    let sum = 0;
    for (let channel = 0; channel < channels; channel++) sum += data[i * channels + channel];
    mono[i] = Math.round(sum / channels);
  }
  return mono;
}

/** Re-cuts a stream of samples into frames of `frameSamples`; the remainder waits for the next push. */
function createFrameCutter(frameSamples: number) {
  let pending = new Int16Array(0);
  return {
    push(pcm: Int16Array): Int16Array[] {
      const joined = new Int16Array(pending.length + pcm.length);
      joined.set(pending);
      joined.set(pcm, pending.length);
      const frames: Int16Array[] = [];
      let offset = 0;
      for (; offset + frameSamples <= joined.length; offset += frameSamples) frames.push(joined.slice(offset, offset + frameSamples));
      pending = joined.slice(offset);
      return frames;
    },
    reset() {
      pending = new Int16Array(0);
    },
  };
}

export interface InboundConverter {
  /** One LiveKit frame in; the whole runtime frames (320 samples, 16 kHz mono) it completes out. */
  push(frame: PcmFrame): Int16Array[];
  close(): void;
}

/** LiveKit audio at `sampleRate` with `channels` → the runtime's frames (downmix, resample, re-cut). */
export async function createInboundConverter(sampleRate: number, channels: number): Promise<InboundConverter> {
  const resampler = await createResampler(sampleRate, SAMPLE_RATE);
  const cutter = createFrameCutter(FRAME_SAMPLES);
  return {
    push(frame) {
      // The resampler keeps state for one rate: a frame in another format would be garbled, not converted.
      if (frame.sampleRate !== sampleRate || frame.channels !== channels) {
        throw new RangeError(`expected ${sampleRate} Hz × ${channels}, got ${frame.sampleRate} Hz × ${frame.channels}`);
      }
      return cutter.push(resampler.process(downmixToMono(frame)));
    },
    close: () => resampler.close(),
  };
}

export interface OutboundConverter {
  /** One runtime frame (16 kHz mono) in; the whole mono frames of 10 ms at the output rate it completes out. */
  push(frame16k: Int16Array): PcmFrame[];
  /** Drops the partial frame waiting for more samples (barge-in). */
  reset(): void;
  close(): void;
}

/** The runtime's frames → mono frames of 10 ms at `outRate`, for an AudioSource. */
export async function createOutboundConverter(outRate: number = LIVEKIT_SAMPLE_RATE): Promise<OutboundConverter> {
  const samplesPerChannel = (outRate * LIVEKIT_FRAME_MS) / 1000;
  if (!Number.isInteger(samplesPerChannel)) throw new RangeError(`${outRate} Hz has no whole number of samples in ${LIVEKIT_FRAME_MS} ms`);
  const resampler = await createResampler(SAMPLE_RATE, outRate);
  const cutter = createFrameCutter(samplesPerChannel);
  return {
    push: (frame16k) => cutter.push(resampler.process(frame16k)).map((data) => ({ data, sampleRate: outRate, channels: 1, samplesPerChannel })),
    // The resampler's few samples of filter history are kept: a millisecond of the old audio at most.
    reset: () => cutter.reset(),
    close: () => resampler.close(),
  };
}

/** What the playout needs of an @livekit/rtc-node AudioSource. */
export interface PlayoutSink {
  captureFrame(frame: AudioFrame): Promise<void>;
  clearQueue(): void;
  /** Milliseconds captured and not yet played. */
  readonly queuedDuration: number;
}

type PlayoutEntry = { kind: 'audio'; frame: PcmFrame } | { kind: 'mark'; name: string };

export interface Playout {
  /** Queues frames; they are captured one at a time (the source blocks while its own buffer is full). */
  enqueue(frames: PcmFrame[]): void;
  /** Reports `name` once the audio queued before it has played. */
  mark(name: string): void;
  /** Audio queued here and in the source, in milliseconds. */
  queuedMs(): number;
  /** Drops the audio not yet played; reports the pending marks at once (as Twilio does on `clear`). */
  clear(): void;
  close(): void;
}

export function createPlayout(sink: PlayoutSink, onMark: (name: string) => void, onError: (error: Error) => void): Playout {
  let entries: PlayoutEntry[] = [];
  let waitingMs = 0;
  const markTimers = new Map<NodeJS.Timeout, string>();
  let pumping = false;
  let closed = false;

  const durationMs = (frame: PcmFrame) => (frame.samplesPerChannel * 1000) / frame.sampleRate;

  function playedAfter(name: string, ms: number) {
    const timer = setTimeout(() => {
      markTimers.delete(timer);
      onMark(name);
    }, ms);
    markTimers.set(timer, name);
  }

  async function pump() {
    if (pumping) return;
    pumping = true;
    try {
      while (!closed && entries.length > 0) {
        const entry = entries.shift()!;
        // Everything before the mark has been captured: it plays once the source's buffer drains.
        if (entry.kind === 'mark') playedAfter(entry.name, sink.queuedDuration);
        else {
          waitingMs -= durationMs(entry.frame);
          const { data, sampleRate, channels, samplesPerChannel } = entry.frame;
          await sink.captureFrame(new AudioFrame(data, sampleRate, channels, samplesPerChannel));
        }
      }
    } catch (error) {
      onError(error instanceof Error ? error : new Error(String(error)));
    } finally {
      pumping = false;
    }
  }

  return {
    enqueue(frames) {
      if (closed || frames.length === 0) return;
      for (const frame of frames) {
        entries.push({ kind: 'audio', frame });
        waitingMs += durationMs(frame);
      }
      void pump();
    },
    mark(name) {
      if (closed) return;
      entries.push({ kind: 'mark', name });
      void pump();
    },
    queuedMs: () => waitingMs + sink.queuedDuration,
    clear() {
      const dropped = entries;
      entries = [];
      waitingMs = 0;
      sink.clearQueue();
      const pending = [...markTimers.values()];
      for (const timer of markTimers.keys()) clearTimeout(timer);
      markTimers.clear();
      for (const entry of dropped) if (entry.kind === 'mark') pending.push(entry.name);
      for (const name of pending) onMark(name);
    },
    close() {
      closed = true;
      entries = [];
      for (const timer of markTimers.keys()) clearTimeout(timer);
      markTimers.clear();
    },
  };
}

export interface LiveKitRoomOptions {
  /** LIVEKIT_URL (ws:// or wss://). */
  url: string;
  /** The agent participant's access token for the session's room (RealtimeMediaProvider.mintToken). */
  token: string;
  /** Agent audio queued and not yet played beyond which send() answers false (default 2 s). */
  maxQueuedMs?: number;
  /** Caller frames kept until the call session listens (default 100: 2 s). */
  maxEarlyFrames?: number;
}

/**
 * The AudioSource's own buffer, in ms: small, since the runtime paces its frames in real time and a
 * barge-in should silence the agent at once.
 */
const SOURCE_QUEUE_MS = 200;

/** Listeners of a MediaStream: caller frames kept until someone listens, a close reported once. */
function createMediaListeners(maxEarlyFrames: number) {
  let frameListener: ((frame: Int16Array) => void) | null = null;
  const early: Int16Array[] = [];
  const markListeners: Array<(name: string) => void> = [];
  const closeListeners: Array<(reason: MediaCloseReason) => void> = [];
  return {
    deliver(frame: Int16Array) {
      if (frameListener) return frameListener(frame);
      early.push(frame);
      if (early.length > maxEarlyFrames) early.shift();
    },
    marked: (name: string) => {
      for (const listener of markListeners) listener(name);
    },
    closed: (reason: MediaCloseReason | null) => {
      for (const listener of closeListeners.splice(0)) if (reason) listener(reason);
    },
    onFrame(listener: (frame: Int16Array) => void) {
      frameListener = listener;
      for (const frame of early.splice(0)) listener(frame);
    },
    onMark: (listener: (name: string) => void) => void markListeners.push(listener),
    onClose: (listener: (reason: MediaCloseReason) => void) => void closeListeners.push(listener),
  };
}

/** Reads the caller's audio: the latest subscribed audio track (a republished microphone replaces the old one). */
function listenToCaller(room: Room, inbound: InboundConverter, deliver: (frame: Int16Array) => void) {
  let reader: ReturnType<AudioStream['getReader']> | null = null;
  async function read(track: RemoteTrack) {
    void reader?.cancel();
    // Asked at 48 kHz mono, LiveKit converts whatever the caller sent: the converter sees one format.
    const current = new AudioStream(track, { sampleRate: LIVEKIT_SAMPLE_RATE, numChannels: 1 }).getReader();
    reader = current;
    try {
      for (let next = await current.read(); !next.done; next = await current.read()) {
        for (const frame of inbound.push(next.value)) deliver(frame);
      }
    } catch {
      // Cancelled (another track, or closing): nothing more to read.
    }
  }
  const onTrack = (track: RemoteTrack) => {
    if (track.kind === TrackKind.KIND_AUDIO) void read(track);
  };
  room.on(RoomEvent.TrackSubscribed, onTrack);
  return {
    stop() {
      room.off(RoomEvent.TrackSubscribed, onTrack);
      void reader?.cancel();
      reader = null;
    },
  };
}

/** Why the room ended for us, as the runtime says it: the session ending is a hang-up, the rest a failure. */
function closeReason(reason: DisconnectReason): MediaCloseReason {
  const hangups = [DisconnectReason.ROOM_DELETED, DisconnectReason.ROOM_CLOSED, DisconnectReason.PARTICIPANT_REMOVED, DisconnectReason.CLIENT_INITIATED];
  if (hangups.includes(reason)) return { kind: 'hangup' };
  return { kind: 'error', message: `left the LiveKit room: ${DisconnectReason[reason] ?? reason}` };
}

/**
 * Joins a LiveKit room as the agent and answers it as the runtime's MediaStream: the caller's audio
 * track in, one published microphone track out. The caller leaving, or the room ending, closes it.
 */
export async function joinLiveKitRoom(options: LiveKitRoomOptions): Promise<MediaStream> {
  const maxQueuedMs = options.maxQueuedMs ?? 2000;
  const [inbound, outbound] = await Promise.all([createInboundConverter(LIVEKIT_SAMPLE_RATE, 1), createOutboundConverter(LIVEKIT_SAMPLE_RATE)]);
  const media = createMediaListeners(options.maxEarlyFrames ?? 100);
  const room = new Room();
  const source = new AudioSource(LIVEKIT_SAMPLE_RATE, 1, SOURCE_QUEUE_MS);
  const track = LocalAudioTrack.createAudioTrack('agent', source);
  let ended = false;

  const playout = createPlayout(source, media.marked, (error) => end({ kind: 'error', message: `LiveKit playout failed: ${error.message}` }));
  const caller = listenToCaller(room, inbound, (frame) => {
    if (!ended) media.deliver(frame);
  });
  /** `reason` null: ended from our side, the session already knows. */
  function end(reason: MediaCloseReason | null) {
    if (ended) return;
    ended = true;
    caller.stop();
    playout.close();
    media.closed(reason);
    void (async () => {
      await track.close(true).catch(() => undefined);
      await room.disconnect().catch(() => undefined);
      inbound.close();
      outbound.close();
    })();
  }

  room.on(RoomEvent.ParticipantDisconnected, () => end({ kind: 'hangup' }));
  room.on(RoomEvent.Disconnected, (reason) => end(closeReason(reason)));
  try {
    await room.connect(options.url, options.token, { autoSubscribe: true, dynacast: false });
    await room.localParticipant!.publishTrack(track, new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
  } catch (error) {
    end(null);
    throw error;
  }

  return {
    onFrame: media.onFrame,
    onMark: media.onMark,
    onClose: media.onClose,
    send(frame) {
      if (ended) return true;
      if (playout.queuedMs() > maxQueuedMs) return false;
      playout.enqueue(outbound.push(frame));
      return true;
    },
    mark: (name) => playout.mark(name),
    clear() {
      outbound.reset();
      playout.clear();
    },
    close: () => end(null),
  };
}
