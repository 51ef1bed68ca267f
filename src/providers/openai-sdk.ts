import { createRequire } from 'node:module';

// The openai package, loaded when the first OpenAI-compatible adapter is built (a CommonJS
// package: `require` loads it then, synchronously). A deployment without an OpenAI-compatible
// engine never loads it; a static import cost every start-up its load (docs/decisions.md, "Start-up").

const require = createRequire(import.meta.url);
let sdk: typeof import('openai') | undefined;

export function openAiSdk(): typeof import('openai') {
  sdk ??= require('openai') as typeof import('openai');
  return sdk;
}
