import { FRAME_MS, FRAME_SAMPLES } from '../platform/audio/frames.ts';
import { MULAW_FRAME_BYTES, MULAW_SILENCE } from '../platform/audio/mulaw.ts';
import { framePacerOf } from './frame-pacer.ts';
import type { RuntimeClock } from '../ports/clock.ts';
import type { MediaStream } from '../ports/media.ts';

// The agent's mouth: synthesised audio queued by segment (one sentence each), written to the
// transport one 20 ms frame at a time, paced by the runtime clock (never faster than it plays, so
// a barge-in drops what was not yet heard). Knows which part of each segment was played. The first
// frame of a reply leaves at once; the rest on the beat every call on the clock shares (frame-pacer.ts).
// A transport that plays frames at their time itself (MediaStream.leadMs) is handed them that far
// ahead, each with its delay; a clear un-counts those it dropped before they were due.
// Audio is PCM16 16 kHz (320 samples a frame, written with `send`), or the transport's own μ-law
// 8 kHz (160 bytes a frame, written through `stream.mulaw`) for a call that passes it through.

/** Agent audio as queued: PCM16 16 kHz, or μ-law 8 kHz (a transport with `mulaw`). */
export type AgentAudio = Int16Array | Uint8Array;

/** Elements of `audio` in one 20 ms frame. */
export const frameLength = (audio: AgentAudio) => (audio instanceof Uint8Array ? MULAW_FRAME_BYTES : FRAME_SAMPLES);

/** A piece of agent audio queued: its frames, and how many of them were written. */
export interface SpokenSegment {
  frames: number;
  played: number;
}

/** The frames of `segments` in all, and how many of them were played. */
export function framesOf(segments: readonly SpokenSegment[]): { frames: number; played: number } {
  return segments.reduce((sum, s) => ({ frames: sum.frames + s.frames, played: sum.played + s.played }), { frames: 0, played: 0 });
}

export interface SpeakerDeps {
  clock: RuntimeClock;
  stream: MediaStream;
  /** Every frame written, with the clock time it was written at (the recorder). */
  onFrame?: (frame: AgentAudio, atMs: number) => void;
  /** The transport refused a frame (over its bound): the peer is too slow. */
  onOverflow?: () => void;
  /** Bound on queued audio, in frames (default 5 minutes). */
  maxQueuedFrames?: number;
}

interface QueuedSegment extends SpokenSegment {
  audio: AgentAudio;
  /** Due time of the last frame handed over. */
  lastDue: number;
}

export function createSpeaker(deps: SpeakerDeps) {
  const { clock, stream } = deps;
  const maxQueued = deps.maxQueuedFrames ?? (5 * 60_000) / FRAME_MS;
  let queue: QueuedSegment[] = [];
  let queuedFrames = 0;
  const pacer = framePacerOf(clock);
  /** On the pacer's beat: audio queued, or the last frame written still playing. */
  let pacing = false;
  /** Clock time at which the next frame is due (frames keep their cadence across segments). */
  let nextDue = 0;
  /** How far ahead frames are handed over, in clock ms (0: each when it is due). */
  const lead = stream.leadMs && stream.leadMs > 0 ? stream.leadMs / clock.scale : 0;
  /** Segments whose last frame handed over may not be due yet, oldest first: a clear un-counts those frames. */
  let ahead: QueuedSegment[] = [];
  const idleWaiters: Array<() => void> = [];
  const firstFrameWaiters: Array<(atMs: number) => void> = [];

  function head(): QueuedSegment | undefined {
    while (queue.length > 0 && queue[0].played >= queue[0].frames) queue.shift();
    return queue[0];
  }

  function frameOf(segment: QueuedSegment, index: number): AgentAudio {
    const size = frameLength(segment.audio);
    const frame = segment.audio.subarray(index * size, (index + 1) * size);
    if (frame.length === size) return frame;
    const padded = frame instanceof Uint8Array ? new Uint8Array(size).fill(MULAW_SILENCE) : new Int16Array(size);
    padded.set(frame);
    return padded;
  }

  const write = (frame: AgentAudio, delayMs: number | undefined) => (frame instanceof Uint8Array ? (stream.mulaw?.send(frame, delayMs) ?? false) : stream.send(frame, delayMs));

  /** Writes every frame due by now (at high simulated speed several per beat); false once played out. */
  function step(): boolean {
    if (!pacing) return false;
    const now = clock.now();
    while (ahead.length > 0 && ahead[0].lastDue <= now && (ahead.length > 1 || ahead[0].played >= ahead[0].frames)) ahead.shift();
    while (nextDue <= now + lead) {
      const segment = head();
      if (!segment) break;
      const frame = frameOf(segment, segment.played);
      segment.played++;
      queuedFrames--;
      segment.lastDue = nextDue;
      if (nextDue > now && ahead.at(-1) !== segment) ahead.push(segment);
      if (!write(frame, lead > 0 ? (nextDue - now) * clock.scale : undefined)) {
        pacing = false;
        deps.onOverflow?.();
        return false;
      }
      deps.onFrame?.(frame, nextDue);
      for (const waiter of firstFrameWaiters.splice(0)) waiter(nextDue);
      nextDue += FRAME_MS;
    }
    // Queue empty: idle once the last written frame has had its time to play.
    if (!head() && nextDue <= now) {
      pacing = false;
      for (const waiter of idleWaiters.splice(0)) waiter();
    }
    return pacing;
  }

  return {
    /**
     * Queues one segment's audio (PCM16 16 kHz, or μ-law when the transport has it). Answers the
     * segment, whose `played` counts the frames written as they go, or null when the bound is reached.
     */
    enqueue(audio: AgentAudio): SpokenSegment | null {
      if (audio instanceof Uint8Array && !stream.mulaw) throw new Error('the transport takes no μ-law audio');
      const frames = Math.ceil(audio.length / frameLength(audio));
      if (queuedFrames + frames > maxQueued) return null;
      const segment: QueuedSegment = { audio, frames, played: 0, lastDue: 0 };
      if (frames === 0) return segment;
      queue.push(segment);
      queuedFrames += frames;
      if (!pacing) {
        nextDue = Math.max(nextDue, clock.now());
        pacing = true;
        pacer.add(step);
        step();
      }
      return segment;
    },
    /** True while audio is queued or still playing out. */
    get busy(): boolean {
      return pacing || head() !== undefined;
    },
    /** Resolves with the clock time of the next frame written. */
    nextFrame(): Promise<number> {
      return new Promise((resolve) => firstFrameWaiters.push(resolve));
    },
    /** Resolves when everything queued has been played out. */
    idle(): Promise<void> {
      if (!this.busy) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    /**
     * Drops what was not written yet (segments keep their `played` count, less the frames handed
     * ahead that were not due: the transport's clear drops them); pending waits resolve.
     */
    clear(): void {
      const now = clock.now();
      // A segment's handed frames are due every FRAME_MS up to its lastDue: those after now were not heard.
      for (const segment of ahead) if (segment.lastDue > now) segment.played -= Math.min(segment.played, Math.ceil((segment.lastDue - now) / FRAME_MS));
      ahead = [];
      pacing = false;
      pacer.remove(step);
      queue = [];
      queuedFrames = 0;
      nextDue = 0;
      for (const waiter of idleWaiters.splice(0)) waiter();
    },
  };
}

export type Speaker = ReturnType<typeof createSpeaker>;
