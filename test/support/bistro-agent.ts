import { createBuiltinLlm } from '../../src/providers/llm/builtin.ts';
import { createDialogueEngine } from '../../src/engine/index.ts';
import type { CallAgent } from '../../src/runtime/call-agent.ts';

// The agent the runtime's tests and the calls benchmark run: Ada, the receptionist of a bistro,
// on the built-in engine (offline, deterministic) and the built-in voice. Each caller sets what
// its case turns on (limits, barge-in, transfer, voicemail).

/** Ada with `overrides` on top of the defaults. */
export function bistroAgent(overrides: Partial<CallAgent> = {}): CallAgent {
  return {
    id: 'agent_test',
    name: 'Ada',
    prompt: 'You are Ada, the receptionist of a bistro.',
    first_message: 'Hello, this is Ada from the bistro. How can I help you today?',
    language: 'en-US',
    transfer_number: null,
    functions: [],
    extraction_fields: [],
    end_call_phrases: [],
    knowledge_base_ids: [],
    llm: { provider: 'builtin', model: 'builtin', temperature: 0 },
    voice: 'builtin-ava',
    max_duration_seconds: 120,
    voicemail: { action: 'hangup', message: null },
    turn_end_silence_ms: 500,
    barge_in_min_ms: 250,
    interruptible: true,
    silence_timeout_seconds: 4,
    ...overrides,
  };
}

/** The built-in dialogue engine with no knowledge and functions that answer 200. */
export function builtinEngine() {
  return createDialogueEngine({
    llm: createBuiltinLlm(),
    knowledge: { search: async () => [] },
    functions: { invoke: async () => ({ status: 200, body: null, duration_ms: 0 }) },
  });
}
