// The dialogue engine's public surface: import from here.
export { createDialogueEngine, type DialogueEngineDeps, KB_TOP_K } from './engine.ts';
export type * from './types.ts';
