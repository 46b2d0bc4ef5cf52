// The package ships no types. `dist/rnnoise-sync.js` is an Emscripten ES module whose
// default export builds a module instance (the WebAssembly is embedded and compiled
// synchronously); engine.ts narrows it to the few members it uses.
declare module "@jitsi/rnnoise-wasm/dist/rnnoise-sync.js" {
  const createRnnoiseModule: (overrides?: object) => unknown
  export default createRnnoiseModule
}
