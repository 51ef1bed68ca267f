import samplerate from '@alexanderolsen/libsamplerate-js';

// A CommonJS (UMD) package: its exports come through the default import under ESM.
const { ConverterType, create } = samplerate;

// Sample-rate conversion with libsamplerate (WebAssembly): speech from providers at other rates
// to the runtime's 16 kHz, and the telephony edge (8 kHz mu-law) both ways.

export interface Resampler {
  /** Converts one chunk; consecutive chunks continue one stream. */
  process(pcm: Int16Array): Int16Array;
  close(): void;
}

const toFloat = (pcm: Int16Array) => Float32Array.from(pcm, (s) => s / 32768);
const toPcm16 = (samples: Float32Array) => Int16Array.from(samples, (s) => Math.max(-32768, Math.min(32767, Math.round(s * 32768))));

export async function createResampler(fromRate: number, toRate: number): Promise<Resampler> {
  if (fromRate === toRate) return { process: (pcm) => pcm, close: () => undefined };
  const src = await create(1, fromRate, toRate, { converterType: ConverterType.SRC_SINC_FASTEST });
  return {
    process: (pcm) => toPcm16(src.full(toFloat(pcm))),
    close: () => src.destroy(),
  };
}

/** One whole clip from `fromRate` to `toRate`. */
export async function resamplePcm16(pcm: Int16Array, fromRate: number, toRate: number): Promise<Int16Array> {
  if (fromRate === toRate) return pcm;
  const src = await create(1, fromRate, toRate, { converterType: ConverterType.SRC_SINC_FASTEST });
  try {
    return toPcm16(src.simple(toFloat(pcm)));
  } finally {
    src.destroy();
  }
}
