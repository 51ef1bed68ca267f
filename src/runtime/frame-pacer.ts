import { FRAME_MS } from '../platform/audio/frames.ts';
import type { RuntimeClock, RuntimeTimer } from '../ports/clock.ts';

// One 20 ms beat for every call on a clock: the speakers of all live calls write their due frames
// on the same tick, instead of each arming a timer of its own per frame. Hundreds of calls then
// cost the process one timer per frame period, and their frames leave together (the kernel and
// each peer's event loop take a burst of writes for less than the same writes spread over the
// period). A speaker's frames keep an exact 20 ms cadence once it is on the beat.

export interface FramePacer {
  /** Calls `task` on every beat until it answers false (or `remove`); a task added twice runs once. */
  add(task: () => boolean): void;
  remove(task: () => boolean): void;
  /** Tasks on the beat now. */
  readonly size: number;
}

const pacers = new WeakMap<RuntimeClock, FramePacer>();

/** The beat shared by everything paced by `clock`. */
export function framePacerOf(clock: RuntimeClock): FramePacer {
  let pacer = pacers.get(clock);
  if (!pacer) {
    pacer = createFramePacer(clock);
    pacers.set(clock, pacer);
  }
  return pacer;
}

export function createFramePacer(clock: RuntimeClock): FramePacer {
  const tasks = new Set<() => boolean>();
  let timer: RuntimeTimer | null = null;
  /** Clock time of the next beat: beats stay on one grid, so a late beat does not shift the next. */
  let nextBeat = 0;

  function beat() {
    timer = null;
    for (const task of tasks) {
      if (!task()) tasks.delete(task);
    }
    if (tasks.size === 0) return;
    const now = clock.now();
    nextBeat += FRAME_MS;
    // More than a beat late (a stalled loop): the next beat is the next one on the grid from now.
    if (nextBeat <= now) nextBeat += Math.ceil((now - nextBeat) / FRAME_MS) * FRAME_MS || FRAME_MS;
    timer = clock.setTimer(beat, nextBeat - now);
  }

  return {
    add(task) {
      tasks.add(task);
      if (timer) return;
      nextBeat = clock.now() + FRAME_MS;
      timer = clock.setTimer(beat, FRAME_MS);
    },
    remove(task) {
      tasks.delete(task);
      if (tasks.size === 0 && timer) {
        timer.cancel();
        timer = null;
      }
    },
    get size() {
      return tasks.size;
    },
  };
}
