import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FRAME_SAMPLES } from '../platform/audio/frames.ts';
import { createFramePacer } from './frame-pacer.ts';
import type { MediaStream } from '../ports/media.ts';
import { createSpeaker } from './speaker.ts';
import { manualClock } from './test-helpers.ts';

// The shared 20 ms beat, on a clock the test moves by hand: every task runs on the same beats, one
// timer is armed however many tasks there are, and a late beat does not shift the grid.

describe('frame pacer', () => {
  it('runs every task on one shared beat with one timer, and stops when no task is left', () => {
    const clock = manualClock();
    const pacer = createFramePacer(clock);
    const beats: Record<string, number[]> = { a: [], b: [] };
    let bLeft = 2;
    const a = () => {
      beats.a.push(clock.now());
      return true;
    };
    const b = () => {
      beats.b.push(clock.now());
      return --bLeft > 0;
    };
    pacer.add(a);
    clock.advanceTo(7);
    pacer.add(b);
    pacer.add(b);
    assert.equal(clock.armed(), 1, 'one timer for both tasks');
    clock.advanceTo(61);
    assert.deepEqual(beats.a, [20, 40, 60]);
    assert.deepEqual(beats.b, [20, 40], 'b joined the beat it found, and left when it answered false');
    assert.equal(pacer.size, 1);
    pacer.remove(a);
    assert.equal(clock.armed(), 0, 'no task: no timer');
    clock.advanceTo(200);
    assert.deepEqual(beats.a, [20, 40, 60]);
  });

  it('a late beat runs once, and the next one is back on the grid (late by part of a beat, one beat exactly, several)', () => {
    // The loop is blocked from 20 to `stall`: the beat due at 40 runs then, the next on the grid.
    for (const [stall, expected] of [
      [75, [20, 75, 80, 100]],
      [60, [20, 60, 80, 100]],
      [135, [20, 135, 140]],
    ] as const) {
      const clock = manualClock();
      const pacer = createFramePacer(clock);
      const seen: number[] = [];
      pacer.add(() => {
        seen.push(clock.now());
        return true;
      });
      clock.advanceTo(20);
      clock.stallTo(stall);
      clock.advanceTo(Math.max(101, stall + 5));
      assert.deepEqual(seen, expected, `stalled to ${stall}`);
    }
  });

  it('removing one of two tasks keeps the beat for the other; removing from an idle pacer is nothing', () => {
    const clock = manualClock();
    const pacer = createFramePacer(clock);
    pacer.remove(() => true);
    const seen: number[] = [];
    const a = () => true;
    pacer.add(a);
    pacer.add(() => {
      seen.push(clock.now());
      return true;
    });
    clock.advanceTo(20);
    pacer.remove(a);
    clock.advanceTo(60);
    assert.deepEqual(seen, [20, 40, 60]);
    assert.equal(pacer.size, 1);
  });

  it("two calls' speakers: each reply's first frame at once, then both on the shared beat with one timer", async () => {
    const clock = manualClock();
    const sent: Record<string, number[]> = { a: [], b: [] };
    const streamOf = (name: string) => ({ send: () => sent[name].push(clock.now()) > 0 }) as unknown as MediaStream;
    const a = createSpeaker({ clock, stream: streamOf('a') });
    const b = createSpeaker({ clock, stream: streamOf('b') });
    a.enqueue(new Int16Array(5 * FRAME_SAMPLES));
    clock.advanceTo(7);
    b.enqueue(new Int16Array(3 * FRAME_SAMPLES));
    assert.equal(clock.armed(), 1);
    let idleAt = -1;
    void b.idle().then(() => {
      idleAt = clock.now();
    });
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    clock.advanceTo(79);
    await settle();
    assert.equal(idleAt, -1, 'its last frame (written at 60) is still playing');
    clock.advanceTo(81);
    await settle();
    assert.equal(idleAt, 81, 'played out on the first beat after its last frame ended (80)');
    clock.advanceTo(200);
    assert.deepEqual(sent.a, [0, 20, 40, 60, 80]);
    assert.deepEqual(sent.b, [7, 40, 60]);
    assert.equal(clock.armed(), 0, 'both idle: the beat stops');
  });

  it('a transport that plays frames itself gets them up to its lead ahead, each with its delay; a clear un-counts those not yet due', async () => {
    const clock = manualClock();
    const handed: Array<{ at: number; delay: number | undefined }> = [];
    const stream = { leadMs: 60, send: (_frame: Int16Array, delay?: number) => handed.push({ at: clock.now(), delay }) > 0 } as unknown as MediaStream;
    const recorded: number[] = [];
    const speaker = createSpeaker({ clock, stream, onFrame: (_frame, atMs) => recorded.push(atMs) });
    const segment = speaker.enqueue(new Int16Array(10 * FRAME_SAMPLES));
    assert.ok(segment);
    // At once: the frame due now and the three due within the lead (60 ms).
    assert.deepEqual(handed, [0, 20, 40, 60].map((due) => ({ at: 0, delay: due })));
    clock.advanceTo(20);
    assert.deepEqual(handed.slice(4), [{ at: 20, delay: 60 }], 'one more per beat, 60 ms ahead');
    clock.advanceTo(50);
    assert.equal(segment.played, 6, 'handed over by the beat at 40: due at 0 to 100');
    assert.deepEqual(recorded, [0, 20, 40, 60, 80, 100], 'recorded at their due times');
    // A barge-in at 50: the frames due at 60 to 100 were handed over but not heard.
    speaker.clear();
    assert.equal(segment.played, 3, 'heard: the frames due at 0, 20 and 40');
    clock.advanceTo(200);
    assert.equal(handed.length, 6, 'nothing handed after the clear');
    // Two sentences: the clear falls in the second; the first was heard whole.
    const first = speaker.enqueue(new Int16Array(2 * FRAME_SAMPLES));
    const second = speaker.enqueue(new Int16Array(6 * FRAME_SAMPLES));
    assert.ok(first && second);
    clock.advanceTo(250);
    assert.deepEqual([first.played, second.played], [2, 4], 'handed from 200: due 200, 220, then 240 to 300');
    speaker.clear();
    assert.deepEqual([first.played, second.played], [2, 1], 'heard by 250: due 200 and 220, then 240');
    // On the clock's own time (no lead), a speaker hands each frame when it is due, without a delay.
    const plain: Array<number | undefined> = [];
    const onTime = createSpeaker({ clock, stream: { send: (_frame: Int16Array, delay?: number) => plain.push(delay) > 0 } as unknown as MediaStream });
    onTime.enqueue(new Int16Array(2 * FRAME_SAMPLES));
    clock.advanceTo(360);
    assert.deepEqual(plain, [undefined, undefined]);
  });
});
