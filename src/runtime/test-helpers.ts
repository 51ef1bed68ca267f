import { setTimeout as wallDelay } from 'node:timers/promises';
import type { RuntimeClock } from '../ports/clock.ts';
import type { MediaStream } from '../ports/media.ts';
import type { TraceAttributes, TraceSpan } from './tracing.ts';

/**
 * A clock the test moves by hand (`scale` real ms per clock ms, 1 unless given): `advanceTo` fires
 * due timers in order, `stallTo` is a blocked event loop, `armed` counts the live timers.
 */
export function manualClock(scale = 1) {
  let now = 0;
  let timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
  const clock: RuntimeClock & { advanceTo(ms: number): void; stallTo(ms: number): void; armed(): number } = {
    scale,
    now: () => now,
    setTimer(fn, ms) {
      const timer = { at: now + ms, fn, live: true };
      timers.push(timer);
      return {
        cancel: () => {
          timer.live = false;
        },
      };
    },
    /** Moves time to `ms`, firing due timers in order (a timer fires at its time, or now if late). */
    advanceTo(ms) {
      for (;;) {
        const due = timers.filter((t) => t.live && t.at <= ms).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        due.live = false;
        now = Math.max(now, due.at);
        due.fn();
      }
      timers = timers.filter((t) => t.live);
      now = ms;
    },
    /** A blocked event loop: time passes and no timer fires (the next advanceTo fires them late). */
    stallTo(ms) {
      now = ms;
    },
    armed: () => timers.filter((t) => t.live).length,
  };
  return clock;
}

/**
 * Whether `work` settles before a wall timer of `wallMs` set just after it: an order of two timers,
 * which a loaded machine delays alike, not a measured time. The wall timer is canceled after.
 */
export async function settlesBeforeWall(work: Promise<unknown>, wallMs: number): Promise<boolean> {
  const done = new AbortController();
  const wall = wallDelay(wallMs, false, { signal: done.signal }).catch(() => false);
  const first = await Promise.race([work.then(() => true), wall]);
  done.abort();
  return first;
}

/** A 20 ms beat on `clock` (a call's frames) until the returned function is called: while nothing is held it moves virtual time on. */
export function beating(clock: RuntimeClock): () => void {
  let on = true;
  const beat = () => {
    if (on) clock.setTimer(beat, 20);
  };
  beat();
  return () => {
    on = false;
  };
}

/** A media stream that takes the agent's audio (μ-law too with `mulaw`) and counts what it was sent: frames (each as its distinct sample values, joined by `+`), marks, clears (no caller audio). */
export function countingStream(options: { mulaw?: boolean } = {}) {
  const played = { sent: 0, marks: [] as string[], clears: 0, frames: [] as string[] };
  const sendMulaw = (frame: Uint8Array) => {
    played.sent++;
    played.frames.push(`mulaw:${[...new Set(frame)].join('+')}`);
    return true;
  };
  const stream: MediaStream = {
    ...(options.mulaw ? { mulaw: { onAudio: () => undefined, send: sendMulaw } } : {}),
    onFrame: () => undefined,
    onMark: () => undefined,
    onClose: () => undefined,
    send: (frame) => {
      played.sent++;
      played.frames.push([...new Set(frame)].join('+'));
      return true;
    },
    mark: (name) => void played.marks.push(name),
    clear: () => void played.clears++,
    close: () => undefined,
  };
  return { stream, played };
}

/** Lets promise chains run: a few turns of the event loop (no wall timing). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Moves a hand-moved clock on to `ms` in 20 ms beats, letting promises run before and after each. */
export async function stepTo(clock: ReturnType<typeof manualClock>, ms: number): Promise<void> {
  await settle();
  while (clock.now() < ms) {
    clock.advanceTo(Math.min(ms, clock.now() + 20));
    await settle();
  }
}

/** What a recording span was told: its children, attributes, failures and ends. */
export interface RecordedSpan {
  name: string;
  start: number;
  attributes: TraceAttributes;
  failed: string[];
  ends: number[];
  children: RecordedSpan[];
}

/** A span that records what it is told (`record`), for the runtime's tracing port. */
export function recordingSpan(name = 'call', start = 0, attributes: TraceAttributes = {}): { span: TraceSpan; record: RecordedSpan } {
  const record: RecordedSpan = { name, start, attributes: { ...attributes }, failed: [], ends: [], children: [] };
  const span: TraceSpan = {
    child(childName, startMs, childAttributes) {
      const child = recordingSpan(childName, startMs, childAttributes);
      record.children.push(child.record);
      return child.span;
    },
    set(more) {
      if (typeof more !== 'object') throw new Error('set is given attributes');
      Object.assign(record.attributes, more);
    },
    fail(code) {
      record.failed.push(code);
    },
    end(endMs) {
      record.ends.push(endMs);
    },
  };
  return { span, record };
}
