// Chooses the LLM adapter from configuration: the built-in engine unless LLM_BASE_URL is set.
import type { Clock } from '../../platform/clock.ts';
import { createBuiltinLlm } from './builtin.ts';
import { createOpenAiLlm } from './openai.ts';
import type { LLM, LlmConfig } from '../../ports/llm.ts';


export function createLlm(config: LlmConfig, opts: { clock?: Clock } = {}): LLM {
  if (config.baseUrl === undefined) return createBuiltinLlm(opts);
  return createOpenAiLlm({ baseUrl: config.baseUrl, apiKey: config.apiKey, model: config.model, clock: opts.clock });
}
