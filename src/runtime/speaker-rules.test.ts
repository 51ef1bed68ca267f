import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FRAME_SAMPLES } from '../platform/audio/frames.ts';
import { MULAW_FRAME_BYTES, MULAW_SILENCE } from '../platform/audio/mulaw.ts';
import type { MediaStream } from '../ports/media.ts';
import { createSpeaker } from './speaker.ts';
import { manualClock } from './test-helpers.ts';

// The speaker's rules on a clock moved by hand: its bound on queued audio, the last frame padded
// with silence (PCM and μ-law), μ-law to the carrier's own channel, a transport that refuses a
// frame, and a lead given in real milliseconds on a scaled clock.

type Sent = Array<{ frame: number[]; at: number; delay: number | undefined }>;

function transport(clock: { now(): number }, options: { leadMs?: number; mulaw?: boolean; refuseAfter?: number } = {}) {
  const pcm: Sent = [];
  const mulaw: Sent = [];
  const stream = {
    leadMs: options.leadMs,
    send(frame: Int16Array, delay?: number) {
      pcm.push({ frame: [...frame], at: clock.now(), delay });
      return options.refuseAfter === undefined || pcm.length <= options.refuseAfter;
    },
    mulaw: options.mulaw
      ? {
          send(frame: Uint8Array, delay?: number) {
            mulaw.push({ frame: [...frame], at: clock.now(), delay });
            return true;
          },
        }
      : undefined,
  } as unknown as MediaStream;
  return { stream, pcm, mulaw };
}

const ramp = (n: number) => Int16Array.from({ length: n }, (_, i) => i + 1);

describe('the bound on queued audio', () => {
  it('refuses a segment past it, counts frames out as they are written, and a clear empties it', () => {
    const clock = manualClock();
    const { stream } = transport(clock);
    const speaker = createSpeaker({ clock, stream, maxQueuedFrames: 3 });
    assert.ok(speaker.enqueue(new Int16Array(2 * FRAME_SAMPLES)));
    // The first frame went out at once: one frame queued, room for two.
    assert.equal(speaker.enqueue(new Int16Array(3 * FRAME_SAMPLES)), null);
    assert.ok(speaker.enqueue(new Int16Array(2 * FRAME_SAMPLES)));
    assert.equal(speaker.enqueue(new Int16Array(FRAME_SAMPLES)), null, 'three queued: full');
    clock.advanceTo(20);
    assert.ok(speaker.enqueue(new Int16Array(FRAME_SAMPLES)), 'a frame written makes room for one');
    speaker.clear();
    assert.ok(speaker.enqueue(new Int16Array(3 * FRAME_SAMPLES)), 'a clear drops what was queued');
  });

  it('is five minutes of frames by default', () => {
    const clock = manualClock();
    const speaker = createSpeaker({ clock, stream: transport(clock).stream });
    assert.ok(speaker.enqueue(new Int16Array(FRAME_SAMPLES)));
    assert.ok(speaker.enqueue(new Int16Array(15_000 * FRAME_SAMPLES)));
    assert.equal(speaker.enqueue(new Int16Array(FRAME_SAMPLES)), null);
  });
});

describe('frames', () => {
  it('cuts audio into 20 ms frames, the last padded with silence; an empty segment is played at once', () => {
    const clock = manualClock();
    const { stream, pcm } = transport(clock);
    const speaker = createSpeaker({ clock, stream });
    const empty = speaker.enqueue(new Int16Array(0));
    assert.deepEqual(empty && [empty.frames, empty.played, speaker.busy], [0, 0, false]);
    const audio = ramp(2 * FRAME_SAMPLES + 5);
    speaker.enqueue(audio);
    clock.advanceTo(100);
    assert.deepEqual(
      pcm.map((s) => s.at),
      [0, 20, 40],
    );
    assert.deepEqual(pcm[1].frame, [...audio.subarray(FRAME_SAMPLES, 2 * FRAME_SAMPLES)]);
    assert.deepEqual(pcm[2].frame, [...audio.subarray(2 * FRAME_SAMPLES), ...new Array(FRAME_SAMPLES - 5).fill(0)]);
  });

  it("μ-law goes to the carrier's own channel, padded with μ-law silence; refused on a transport without it", () => {
    const clock = manualClock();
    const { stream, pcm, mulaw } = transport(clock, { mulaw: true });
    const speaker = createSpeaker({ clock, stream });
    const bytes = Uint8Array.from({ length: MULAW_FRAME_BYTES + 3 }, (_, i) => i % 200);
    speaker.enqueue(bytes);
    clock.advanceTo(60);
    assert.equal(pcm.length, 0);
    assert.deepEqual(
      mulaw.map((s) => s.frame),
      [[...bytes.subarray(0, MULAW_FRAME_BYTES)], [...bytes.subarray(MULAW_FRAME_BYTES), ...new Array(MULAW_FRAME_BYTES - 3).fill(MULAW_SILENCE)]],
    );
    const plain = createSpeaker({ clock, stream: transport(clock).stream });
    assert.throws(() => plain.enqueue(bytes), { message: 'the transport takes no μ-law audio' });
  });

  it('a transport that refuses a frame stops the speaker and says so once', () => {
    const clock = manualClock();
    const { stream, pcm } = transport(clock, { refuseAfter: 2 });
    let overflows = 0;
    const written: number[] = [];
    const speaker = createSpeaker({ clock, stream, onOverflow: () => overflows++, onFrame: (_f, at) => written.push(at) });
    speaker.enqueue(new Int16Array(5 * FRAME_SAMPLES));
    clock.advanceTo(200);
    assert.equal(pcm.length, 3, 'the third frame was refused; none after it');
    assert.deepEqual(written, [0, 20], 'a refused frame is not recorded');
    assert.equal(overflows, 1);
    assert.equal(clock.armed(), 0, 'off the beat');
    assert.equal(speaker.busy, true, 'its audio is still queued');
  });

  it('after a refusal, audio queued later goes out again, the rest first; no overflow listener is needed', () => {
    const clock = manualClock();
    let refuse = true;
    const sent: number[] = [];
    const stream = { send: (frame: Int16Array) => (refuse ? false : sent.push(frame[0]) > 0) } as unknown as MediaStream;
    const speaker = createSpeaker({ clock, stream });
    speaker.enqueue(Int16Array.from({ length: 2 * FRAME_SAMPLES }, (_, i) => 1 + Math.floor(i / FRAME_SAMPLES)));
    refuse = false;
    clock.advanceTo(40);
    assert.deepEqual(sent, [], 'stopped');
    speaker.enqueue(new Int16Array(FRAME_SAMPLES).fill(9));
    clock.advanceTo(100);
    assert.deepEqual(sent, [2, 9]);
  });
});

describe('the lead', () => {
  it('is given in real ms: on a clock at half the wall, 60 real ms are 120 clock ms, each delay in real ms', () => {
    const clock = manualClock(0.5);
    const { stream, pcm } = transport(clock, { leadMs: 60 });
    const speaker = createSpeaker({ clock, stream });
    speaker.enqueue(new Int16Array(10 * FRAME_SAMPLES));
    assert.deepEqual(
      pcm.map((s) => s.delay),
      [0, 10, 20, 30, 40, 50, 60],
    );
  });

  it('none, or a negative one, hands each frame when due without a delay', () => {
    for (const leadMs of [0, -40]) {
      const clock = manualClock();
      const { stream, pcm } = transport(clock, { leadMs });
      createSpeaker({ clock, stream }).enqueue(new Int16Array(3 * FRAME_SAMPLES));
      clock.advanceTo(50);
      assert.deepEqual(
        pcm.map((s) => [s.at, s.delay]),
        [
          [0, undefined],
          [20, undefined],
          [40, undefined],
        ],
        `lead ${leadMs}`,
      );
    }
  });
});

describe('idle and clear', () => {
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  /** A speaker on a transport with a 60 ms lead, `frames` frames queued at 0. */
  function ledSegment(frames: number) {
    const clock = manualClock();
    const speaker = createSpeaker({ clock, stream: transport(clock, { leadMs: 60 }).stream });
    const segment = speaker.enqueue(new Int16Array(frames * FRAME_SAMPLES));
    assert.ok(segment);
    return { clock, speaker, segment };
  }

  it('a speaker with nothing queued is idle at once; one frame plays out on the beat its time ends', async () => {
    const clock = manualClock();
    const speaker = createSpeaker({ clock, stream: transport(clock).stream });
    let idle = false;
    void speaker.idle().then(() => (idle = true));
    await settle();
    assert.equal(idle, true);
    speaker.enqueue(new Int16Array(FRAME_SAMPLES));
    assert.equal(speaker.busy, true);
    clock.advanceTo(20);
    assert.equal(speaker.busy, false, 'its frame ended at 20');
  });

  it("a clear un-counts a segment's frames handed ahead and not yet due, though it was handed whole beats before", () => {
    const { clock, speaker, segment: five } = ledSegment(5);
    // At 0 the frames due 0 to 60 are handed, at 20 the one due 80: handed whole, its last due at 80.
    clock.advanceTo(45);
    assert.equal(five.played, 5);
    speaker.clear();
    assert.equal(five.played, 3, 'heard by 45: due 0, 20, 40');
  });

  it('a clear after a stall counts nothing back for frames whose time has passed', () => {
    const { clock, speaker, segment: four } = ledSegment(4);
    clock.advanceTo(45);
    clock.stallTo(100);
    speaker.clear();
    assert.equal(four.played, 4, 'all four were due by 100');
  });
});
