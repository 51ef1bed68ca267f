// The WebAssembly build of the Speex resampler (SIMD) ships without types: its default export instantiates the module.
declare module '@echogarden/speex-resampler-wasm/simd' {
  const createModule: () => Promise<unknown>;
  export default createModule;
}
