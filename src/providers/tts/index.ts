import type { CpuPool } from '../../platform/cpu-pool.ts';
import { type BuiltinTts, createBuiltinTts } from './builtin.ts';
import { createEspeakSpeech, type EspeakOptions } from './espeak.ts';
import { createOpenAiTts } from './openai.ts';
import type { TtsProvider, TtsRegistry } from '../../ports/tts.ts';

// The TTS providers of this deployment: the built-in engine always, configured adapters beside
// it. Voice ids are unique across them, so a voice id alone picks the provider.

const isBuiltin = (provider: TtsProvider): provider is BuiltinTts => provider.name === 'builtin' && 'engine' in provider;

/** A registry of `providers`; by default the built-in voices through the formant synthesiser alone. */
export function createTtsRegistry(providers: TtsProvider[] = [createBuiltinTts()]): TtsRegistry {
  return {
    providers,
    voices: () => providers.flatMap((p) => p.voices()),
    findVoice: (id) => providers.flatMap((p) => p.voices()).find((v) => v.id === id),
    providerOf: (voiceId) => providers.find((p) => p.voices().some((v) => v.id === voiceId)),
    async describe() {
      const builtin = providers.find(isBuiltin);
      return {
        builtin_engine: builtin ? await builtin.engine() : 'formant',
        providers: providers.map((p) => ({ name: p.name, voices: p.voices().length, streaming: typeof p.stream === 'function' })),
      };
    },
  };
}

/** TTS settings as config.ts will hold them (`TTS_BASE_URL`, `TTS_API_KEY`, `TTS_MODEL`, `TTS_VOICES`). */
export interface TtsConfig {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  voices?: string[];
  /** `formant` keeps the built-in voices off espeak-ng even when it is installed (default `auto`). */
  builtinEngine?: 'auto' | 'formant';
}

export interface TtsRegistryOptions {
  /** The app's pool: the formant synthesiser runs in its worker threads. */
  cpu?: CpuPool;
  /** How espeak-ng is run (program path, time-out, process and output caps). */
  espeak?: EspeakOptions;
  /** Told when an espeak-ng run fails and the formant synthesiser speaks that text instead. */
  onEspeakError?: (error: Error) => void;
}

/**
 * The built-in engine (through espeak-ng when it is installed, unless `builtinEngine: 'formant'`),
 * plus the OpenAI-compatible adapter when `config.tts.baseUrl` is set.
 */
export function createTtsRegistryFromConfig(config: { readonly [key: string]: unknown; tts?: TtsConfig }, options: TtsRegistryOptions = {}): TtsRegistry {
  const tts = config.tts;
  const espeak = tts?.builtinEngine === 'formant' ? undefined : createEspeakSpeech(options.espeak);
  // Detected on first use (src/server.ts asks right after listening, for its media log line):
  // spawning `espeak-ng --version` forks this process, which took ~0.5 s of a loaded start-up.
  const providers: TtsProvider[] = [createBuiltinTts({ cpu: options.cpu, espeak, onEspeakError: options.onEspeakError })];
  if (tts?.baseUrl) {
    providers.push(
      createOpenAiTts({ baseUrl: tts.baseUrl, apiKey: tts.apiKey, model: tts.model ?? 'tts-1', voices: tts.voices && tts.voices.length > 0 ? tts.voices : undefined }),
    );
  }
  return createTtsRegistry(providers);
}
