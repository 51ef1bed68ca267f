import fvad from '@echogarden/fvad-wasm';
import { FRAME_SAMPLES, SAMPLE_RATE } from '../../platform/audio/frames.ts';

// Voice activity detection with the WebRTC VAD (libfvad compiled to WebAssembly): one detector
// per call, a few microseconds per 20 ms frame, so it runs on the frame path. Mode 0 is the least
// aggressive (more frames called speech), 3 the most.

interface FvadModule {
  _fvad_new(): number;
  _fvad_free(handle: number): void;
  _fvad_set_mode(handle: number, mode: number): number;
  _fvad_set_sample_rate(handle: number, rate: number): number;
  _fvad_process(handle: number, frame: number, length: number): number;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  HEAP16: Int16Array;
}

let module: Promise<FvadModule> | undefined;

export interface VoiceActivityDetector {
  /** True when the frame (FRAME_SAMPLES of 16 kHz PCM16) holds speech. */
  isSpeech(frame: Int16Array): boolean;
  /** Frees the detector; it must not be used after. */
  close(): void;
}

export async function createVoiceActivityDetector(options: { mode?: 0 | 1 | 2 | 3 } = {}): Promise<VoiceActivityDetector> {
  module ??= fvad() as Promise<FvadModule>;
  const wasm = await module;
  const handle = wasm._fvad_new();
  if (!handle) throw new Error('the VAD could not be created');
  if (wasm._fvad_set_mode(handle, options.mode ?? 2) !== 0 || wasm._fvad_set_sample_rate(handle, SAMPLE_RATE) !== 0) {
    wasm._fvad_free(handle);
    throw new Error('the VAD refused its settings');
  }
  const buffer = wasm._malloc(FRAME_SAMPLES * 2);
  let closed = false;
  return {
    isSpeech(frame) {
      if (closed) return false;
      // HEAP16 is looked up on each call: the WebAssembly memory may have grown since.
      wasm.HEAP16.set(frame.length === FRAME_SAMPLES ? frame : frame.subarray(0, FRAME_SAMPLES), buffer >> 1);
      return wasm._fvad_process(handle, buffer, FRAME_SAMPLES) === 1;
    },
    close() {
      if (closed) return;
      closed = true;
      wasm._free(buffer);
      wasm._fvad_free(handle);
    },
  };
}
