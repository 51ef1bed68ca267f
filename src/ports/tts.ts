// The text-to-speech ports: a provider lists its voices and turns text into mono PCM16 audio
// (TtsProvider); live calls hear speech at the runtime's 16 kHz, as it is produced (TextToSpeech).
// The built-in engine (src/providers/tts/builtin.ts) works offline; other adapters
// (OpenAI-compatible HTTP) plug in beside it and add their voices to GET /v1/voices.

export const VOICE_GENDERS = ['female', 'male', 'neutral'] as const;
export type VoiceGender = (typeof VOICE_GENDERS)[number];

export interface VoiceInfo {
  /** Unique across providers: the built-in voices are `builtin-<name>`. */
  id: string;
  name: string;
  /** BCP 47 tag of the voice's accent. */
  language: string;
  gender: VoiceGender;
  /** Provider name, e.g. `builtin`. */
  provider: string;
  description: string;
}

/** The voice an agent speaks with when it names none: a built-in voice, always available. */
export const DEFAULT_VOICE_ID = 'builtin-ava';

export interface SynthesizedAudio {
  /** Mono signed 16-bit samples. */
  pcm: Int16Array;
  sampleRate: number;
}

export interface SynthesizeOptions {
  /**
   * Whose speech this is, for an engine that computes it in the app's CPU pool: `live` (a live
   * call's: waits for a busy pool) or `request` (the default, an HTTP request's: 503 when busy).
   */
  lane?: 'request' | 'live';
}

export interface TtsProvider {
  readonly name: string;
  voices(): VoiceInfo[];
  /** Speaks `text` with one of this provider's voices; throws for a voice it does not have. */
  synthesize(text: string, voiceId: string, options?: SynthesizeOptions): Promise<SynthesizedAudio>;
  /**
   * Speaks `text` as audio chunks while the provider produces it, so playback starts before the
   * whole text is synthesised (an HTTP API streaming its response). Optional: a provider without it
   * is asked for `synthesize`. Ends early, without an error, once `signal` is aborted.
   */
  stream?(text: string, voiceId: string, signal?: AbortSignal): AsyncIterable<SynthesizedAudio>;
}

/** Speech for live calls: the TTS providers at the runtime's 16 kHz (src/providers/tts/runtime-speech.ts). */
export interface TextToSpeech {
  /** Speaks `text` in `voice`: PCM16 16 kHz chunks as they are produced. */
  synthesize(text: string, voice: string, options?: { signal?: AbortSignal }): AsyncIterable<Int16Array>;
}

/** What GET /v1/media/health and the start-up log say about text to speech. */
export interface TtsDescription {
  /** What speaks the built-in voices. */
  builtin_engine: 'espeak-ng' | 'formant';
  providers: Array<{ name: string; voices: number; streaming: boolean }>;
}

/** The deployment's TTS providers: the built-in engine always, configured adapters beside it. */
export interface TtsRegistry {
  providers: TtsProvider[];
  voices(): VoiceInfo[];
  findVoice(id: string): VoiceInfo | undefined;
  providerOf(voiceId: string): TtsProvider | undefined;
  /** The providers and the built-in engine in use (the first call may wait for espeak-ng's detection). */
  describe(): Promise<TtsDescription>;
}
