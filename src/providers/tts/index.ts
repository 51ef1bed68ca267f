import type { CpuPool } from '../../platform/cpu-pool.ts';
import { createBuiltinTts } from './builtin.ts';
import { createOpenAiTts } from './openai.ts';
import type { TtsProvider, VoiceInfo } from './port.ts';

// The TTS providers of this deployment: the built-in engine always, configured adapters beside
// it. Voice ids are unique across them, so a voice id alone picks the provider.

export interface TtsRegistry {
  providers: TtsProvider[];
  voices(): VoiceInfo[];
  findVoice(id: string): VoiceInfo | undefined;
  providerOf(voiceId: string): TtsProvider | undefined;
}

export function createTtsRegistry(providers: TtsProvider[] = [createBuiltinTts()]): TtsRegistry {
  return {
    providers,
    voices: () => providers.flatMap((p) => p.voices()),
    findVoice: (id) => providers.flatMap((p) => p.voices()).find((v) => v.id === id),
    providerOf: (voiceId) => providers.find((p) => p.voices().some((v) => v.id === voiceId)),
  };
}

/** TTS settings as config.ts will hold them (`TTS_BASE_URL`, `TTS_API_KEY`, `TTS_MODEL`, `TTS_VOICES`). */
export interface TtsConfig {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  voices?: string[];
}

/**
 * The built-in engine, plus the OpenAI-compatible adapter when `config.tts.baseUrl` is set. With
 * `cpu`, the built-in engine synthesises in that pool's worker threads.
 */
export function createTtsRegistryFromConfig(config: { readonly [key: string]: unknown; tts?: TtsConfig }, options: { cpu?: CpuPool } = {}): TtsRegistry {
  const providers: TtsProvider[] = [createBuiltinTts({ cpu: options.cpu })];
  const tts = config.tts;
  if (tts?.baseUrl) {
    providers.push(
      createOpenAiTts({ baseUrl: tts.baseUrl, apiKey: tts.apiKey, model: tts.model ?? 'tts-1', voices: tts.voices && tts.voices.length > 0 ? tts.voices : undefined }),
    );
  }
  return createTtsRegistry(providers);
}
