import alawmulaw from 'alawmulaw';
import { REALTIME_RATE } from './vad.ts';

// The audio formats of a Realtime session, as OpenAI documents them for the GA protocol
// (`session.audio.input.format` / `output.format`): `audio/pcm` (PCM16 little-endian, 24 kHz only),
// `audio/pcmu` (G.711 μ-law) and `audio/pcma` (G.711 A-law), both at 8 kHz, one byte a sample.
// The fake decodes what it is sent in the session's input format (its VAD hears the samples) and
// speaks in its output format.

export interface WireFormat {
  type: 'audio/pcm' | 'audio/pcmu' | 'audio/pcma';
  rate: number;
  /** Bytes a sample takes on the wire. */
  sampleBytes: 1 | 2;
  /** The samples of an appended chunk, or why they are refused. */
  decode(bytes: Buffer): Int16Array | string;
  encode(pcm: Int16Array): Uint8Array;
}

const g711 = (type: 'audio/pcmu' | 'audio/pcma', codec: typeof alawmulaw.mulaw): WireFormat => ({
  type,
  rate: 8000,
  sampleBytes: 1,
  decode: (bytes) => codec.decode(new Uint8Array(bytes)),
  encode: (pcm) => codec.encode(pcm),
});

const FORMATS: Record<WireFormat['type'], WireFormat> = {
  'audio/pcm': {
    type: 'audio/pcm',
    rate: REALTIME_RATE,
    sampleBytes: 2,
    decode: (bytes) => {
      if (bytes.length % 2 !== 0) return 'Invalid audio: PCM16 needs an even number of bytes.';
      const aligned = new Uint8Array(bytes);
      return new Int16Array(aligned.buffer, 0, aligned.length / 2);
    },
    encode: (pcm) => new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength),
  },
  'audio/pcmu': g711('audio/pcmu', alawmulaw.mulaw),
  'audio/pcma': g711('audio/pcma', alawmulaw.alaw),
};

/** A session's format until it names another. */
export const PCM_FORMAT = FORMATS['audio/pcm'];

/** The format a session's `format` object names; null when the API would refuse it (an unknown type, PCM at another rate). */
export function wireFormat(format: { type?: string; rate?: number } | null | undefined): WireFormat | null {
  const found = FORMATS[(format?.type ?? 'audio/pcm') as WireFormat['type']];
  if (!found) return null;
  if (format?.rate !== undefined && format.rate !== found.rate) return null;
  return found;
}
