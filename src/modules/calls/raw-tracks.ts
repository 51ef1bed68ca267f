import type { FastifyBaseLogger } from 'fastify';
import type { BlobStore } from '../../ports/blobs.ts';
import { SAMPLE_RATE } from '../../platform/audio/frames.ts';
import { BLOCK_SAMPLES, type CallRecorder, mixInto } from '../../runtime/audio/recorder.ts';

// The call's raw tracks in the BlobStore (DESIGN part 9, "after the call"): each side's 10 s
// blocks of PCM16 (little-endian, 16 kHz, on the call's timeline) written while the call goes on,
// the rest when its conversation ends, before the journal's finish commits. The post-call job
// mixes them (as the recorder does: summed with clipping) into the MP3, then deletes them.

const TRACKS = ['caller', 'agent'] as const;
/** A block is written once the caller's side is this far past its end (agent audio handed ahead may still change it before). */
const SETTLE_SAMPLES = 2 * SAMPLE_RATE;
const FLUSH_EVERY_MS = 1000;

export const rawTrackKey = (workspaceId: string, callId: string, track: 'caller' | 'agent', index: number) =>
  `recordings/raw/${workspaceId}/${callId}/${track}-${String(index).padStart(5, '0')}.pcm`;

const blocksOf = (samples: number) => Math.ceil(samples / BLOCK_SAMPLES);
const bytesOf = (pcm: Int16Array) => Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);

/**
 * Writes a live call's completed blocks off the frame path (a timer takes them, the writes are
 * chained and never awaited there); `finish()` writes the rest and answers the samples recorded.
 */
export function createRawTrackWriter(deps: { blobs: BlobStore; recorder: CallRecorder; workspaceId: string; callId: string; logger: FastifyBaseLogger }) {
  const { blobs, recorder } = deps;
  let written = 0;
  let chain: Promise<void> = Promise.resolve();
  let failure: unknown = null;

  /** Queues the writes of blocks `written..upTo-1` (copied now: the recorder's memory is reused after the call). */
  function queueUpTo(upTo: number): void {
    for (; written < upTo; written++) {
      const index = written;
      const parts = TRACKS.map((track) => ({ key: rawTrackKey(deps.workspaceId, deps.callId, track, index), bytes: bytesOf(recorder.trackBlock(track, index)) }));
      chain = chain
        .then(() => Promise.all(parts.map((part) => blobs.put(part.key, part.bytes, 'application/octet-stream'))))
        .then(
          () => undefined,
          (err) => {
            failure ??= err;
            deps.logger.warn({ err, callId: deps.callId }, 'a raw recording block could not be written');
          },
        );
    }
  }

  const timer = setInterval(() => {
    const { caller } = recorder.samples();
    queueUpTo(Math.max(written, Math.floor((caller - SETTLE_SAMPLES) / BLOCK_SAMPLES)));
  }, FLUSH_EVERY_MS);
  timer.unref();

  return {
    /** Writes what is left; answers the samples of the tracks (0: nothing recorded). Throws when a block could not be written. */
    async finish(): Promise<number> {
      clearInterval(timer);
      const samples = recorder.samples().end;
      queueUpTo(blocksOf(samples));
      await chain;
      if (failure) throw failure;
      return samples;
    },
    /** Stops the timer without writing more (a call that failed in the runtime). */
    stop(): void {
      clearInterval(timer);
    },
  };
}

/** A stored block as PCM16 (copied: a stored buffer may sit at an odd offset). */
function pcmOf(bytes: Buffer): Int16Array {
  const copy = new Uint8Array(bytes.length - (bytes.length % 2));
  copy.set(bytes.subarray(0, copy.length));
  return new Int16Array(copy.buffer);
}

/** Raw tracks that are gone: the recording cannot be made, however many times it is tried. */
export class RawTracksMissingError extends Error {
  constructor(key: string) {
    super(`the raw recording block ${key.split('/').at(-1)} is missing`);
    this.name = 'RawTracksMissingError';
  }
}

/** The call's mixed track from its raw blocks: `samples` long, caller and agent summed with clipping. */
export async function readMixedTracks(blobs: BlobStore, workspaceId: string, callId: string, samples: number): Promise<Int16Array> {
  const out = new Int16Array(samples);
  for (let index = 0; index < blocksOf(samples); index++) {
    const base = index * BLOCK_SAMPLES;
    // Both read at once; a missing block is named in the tracks' order, not by which read ended
    // first (the failure stored on the call must not depend on the machine's load).
    const reads = await Promise.allSettled(
      TRACKS.map(async (track) => {
        const key = rawTrackKey(workspaceId, callId, track, index);
        const blob = await blobs.get(key);
        if (!blob) throw new RawTracksMissingError(key);
        return pcmOf(blob.bytes);
      }),
    );
    const failed = reads.find((read) => read.status === 'rejected');
    if (failed) throw failed.reason;
    const [caller, agent] = reads.map((read) => (read as PromiseFulfilledResult<Int16Array>).value);
    const length = Math.min(BLOCK_SAMPLES, samples - base);
    out.set(caller.subarray(0, length), base);
    mixInto(out.subarray(base, base + length), agent);
  }
  return out;
}

/**
 * The samples of the complete blocks (both tracks) a call's process wrote before it died, from the
 * first: blocks are written in order, so at most the last one it was writing is incomplete.
 */
export async function savedRawSamples(blobs: BlobStore, workspaceId: string, callId: string): Promise<number> {
  let blocks = 0;
  for (;;) {
    const found = await Promise.all(TRACKS.map((track) => blobs.stat(rawTrackKey(workspaceId, callId, track, blocks))));
    if (found.some((blob) => blob === null)) return blocks * BLOCK_SAMPLES;
    blocks++;
  }
}

/** Deletes both tracks of one block (missing ones are no error). */
export async function deleteRawBlock(blobs: BlobStore, workspaceId: string, callId: string, index: number): Promise<void> {
  await Promise.all(TRACKS.map((track) => blobs.delete(rawTrackKey(workspaceId, callId, track, index))));
}

/** Deletes the raw blocks (once the MP3 is stored). */
export async function deleteRawTracks(blobs: BlobStore, workspaceId: string, callId: string, samples: number): Promise<void> {
  for (let index = 0; index < blocksOf(samples); index++) await deleteRawBlock(blobs, workspaceId, callId, index);
}
