import createSpeexModule from '@echogarden/speex-resampler-wasm/simd';

// Sample-rate conversion with the Speex resampler (SpeexDSP, compiled to WebAssembly): speech from
// providers at other rates to the runtime's 16 kHz, and the telephony edge (8 kHz) both ways. Built
// for VoIP: one module per process, a small state per stream (created in microseconds), 16-bit
// samples in and out, about 15 µs per 20 ms frame, so it runs on the frame path.

interface SpeexModule {
  _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errorPointer: number): number;
  _speex_resampler_destroy(state: number): void;
  _speex_resampler_process_int(state: number, channel: number, input: number, inputLength: number, output: number, outputLength: number): number;
  _speex_resampler_skip_zeros(state: number): number;
  _speex_resampler_get_input_latency(state: number): number;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  HEAP16: Int16Array;
  HEAPU32: Uint32Array;
}

/** Speex quality 0–10: 6 is transparent for speech at these rates and still cheap. */
const QUALITY = 6;

let module: Promise<SpeexModule> | undefined;
const speex = () => {
  module ??= createSpeexModule() as Promise<SpeexModule>;
  return module;
};

export interface Resampler {
  /** Converts one chunk; consecutive chunks continue one stream. */
  process(pcm: Int16Array): Int16Array;
  close(): void;
}

function open(wasm: SpeexModule, fromRate: number, toRate: number) {
  const lengths = wasm._malloc(8);
  const state = wasm._speex_resampler_init(1, fromRate, toRate, QUALITY, lengths);
  if (!state) {
    wasm._free(lengths);
    throw new Error(`the resampler refused ${fromRate} → ${toRate} Hz`);
  }
  let capacity = 0;
  let input = 0;
  let output = 0;
  let closed = false;

  function ensure(samples: number) {
    if (samples <= capacity) return;
    if (input) wasm._free(input);
    if (output) wasm._free(output);
    capacity = Math.max(samples, 1024);
    input = wasm._malloc(capacity * 2);
    output = wasm._malloc(Math.ceil((capacity * toRate) / fromRate + 64) * 2);
  }

  return {
    state,
    process(pcm: Int16Array): Int16Array {
      if (closed || pcm.length === 0) return new Int16Array(0);
      ensure(pcm.length);
      const room = Math.ceil((capacity * toRate) / fromRate + 64);
      // The heap views are looked up on each call: the WebAssembly memory may have grown since.
      wasm.HEAP16.set(pcm, input >> 1);
      wasm.HEAPU32[lengths >> 2] = pcm.length;
      wasm.HEAPU32[(lengths >> 2) + 1] = room;
      const error = wasm._speex_resampler_process_int(state, 0, input, lengths, output, lengths + 4);
      if (error !== 0) throw new Error(`the resampler failed (${error})`);
      const produced = wasm.HEAPU32[(lengths >> 2) + 1];
      return wasm.HEAP16.slice(output >> 1, (output >> 1) + produced);
    },
    close() {
      if (closed) return;
      closed = true;
      if (input) wasm._free(input);
      if (output) wasm._free(output);
      wasm._free(lengths);
      wasm._speex_resampler_destroy(state);
    },
  };
}

export async function createResampler(fromRate: number, toRate: number): Promise<Resampler> {
  if (fromRate === toRate) return { process: (pcm) => pcm, close: () => undefined };
  const { process, close } = open(await speex(), fromRate, toRate);
  return { process, close };
}

/** Loads the resampler once; the answer then makes a stream's resampler synchronously (on a frame path). */
export async function loadResamplers(): Promise<(fromRate: number, toRate: number) => Resampler> {
  const wasm = await speex();
  return (fromRate, toRate) => {
    if (fromRate === toRate) return { process: (pcm) => pcm, close: () => undefined };
    const { process, close } = open(wasm, fromRate, toRate);
    return { process, close };
  };
}

/** One whole clip from `fromRate` to `toRate`, aligned (no filter delay at the start, the tail flushed). */
export async function resamplePcm16(pcm: Int16Array, fromRate: number, toRate: number): Promise<Int16Array> {
  if (fromRate === toRate) return pcm;
  const wasm = await speex();
  const resampler = open(wasm, fromRate, toRate);
  try {
    wasm._speex_resampler_skip_zeros(resampler.state);
    const body = resampler.process(pcm);
    const tail = resampler.process(new Int16Array(wasm._speex_resampler_get_input_latency(resampler.state)));
    const expected = Math.round((pcm.length * toRate) / fromRate);
    const whole = new Int16Array(expected);
    whole.set(body.subarray(0, expected));
    whole.set(tail.subarray(0, Math.max(0, expected - body.length)), Math.min(body.length, expected));
    return whole;
  } finally {
    resampler.close();
  }
}
