// The WebAssembly build of libfvad ships without types: its default export instantiates the module.
declare module '@echogarden/fvad-wasm' {
  const createModule: () => Promise<unknown>;
  export default createModule;
}
