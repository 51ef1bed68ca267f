import type { RuntimeClock, RuntimeTimer } from '../../ports/clock.ts';
import type { CallMedia } from '../../ports/telephony.ts';
import { latencySummary, type SessionOutcome, type TranscriptEntry } from '../outcome.ts';

// The call shell's time and end: the call's milliseconds since the answer, its timers (all
// cancelled at the end), the transcript, and the end itself — once, with the hang-up rule and the
// outcome.

export type CallEnd = Omit<SessionOutcome, 'durationMs' | 'transcript' | 'latency'>;

export function callEnding(clock: RuntimeClock, media: CallMedia, onEnd: () => void) {
  const transcript: TranscriptEntry[] = [];
  const timers = new Set<RuntimeTimer>();
  const answeredAt = clock.now();
  /** The far end closed the media (hang-up, transport failure): nothing to hang up. */
  let transportClosed = false;
  let ended = false;
  let resolveOutcome!: (outcome: SessionOutcome) => void;
  const outcome = new Promise<SessionOutcome>((resolve) => {
    resolveOutcome = resolve;
  });
  const since = (atMs: number) => Math.max(0, Math.round(atMs - answeredAt));

  return {
    transcript,
    outcome,
    since,
    /** A timer on the call's clock, cancelled when the call ends. */
    later(fn: () => void, ms: number): RuntimeTimer {
      const timer = clock.setTimer(() => {
        timers.delete(timer);
        fn();
      }, ms);
      timers.add(timer);
      return timer;
    },
    get ended() {
      return ended;
    },
    /** The far end closed the media: the end that follows hangs nothing up. */
    closedByFarEnd() {
      transportClosed = true;
    },
    finish(end: CallEnd) {
      if (ended) return;
      ended = true;
      onEnd();
      for (const timer of timers) timer.cancel();
      timers.clear();
      // The far end that closed the media (hang-up, transport failure) needs no hang-up, nor a
      // transferred call; anything else that ends the call (a model or a reply that failed, a slow
      // transport, a rule) must not leave the caller on the line.
      if (!transportClosed && end.status !== 'transferred') void media.hangup(end.endReason).catch(() => undefined);
      resolveOutcome({ ...end, durationMs: since(clock.now()), transcript, latency: latencySummary(transcript) });
    },
  };
}

export type CallEnding = ReturnType<typeof callEnding>;
