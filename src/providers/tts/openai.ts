import OpenAI from 'openai';
import type { SynthesizedAudio, TtsProvider, VoiceInfo } from './port.ts';

// OpenAI-compatible text to speech (`POST {baseURL}/audio/speech`) through the official SDK with a
// configurable baseURL (OpenAI, or a compatible server such as openedai-speech, Kokoro-FastAPI,
// LocalAI). Audio is asked for as `pcm`: raw 16-bit little-endian mono at 24 kHz, no decoding.
// Voice ids are `openai-<voice>` so they never collide with the built-in ones.

export const OPENAI_PCM_SAMPLE_RATE = 24_000;
export const OPENAI_DEFAULT_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse'] as const;

export interface OpenAiTtsOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Provider voice names offered (default OPENAI_DEFAULT_VOICES). */
  voices?: readonly string[];
  timeoutMs?: number;
}

const ID_PREFIX = 'openai-';

export function createOpenAiTts(options: OpenAiTtsOptions): TtsProvider {
  const client = new OpenAI({
    baseURL: options.baseUrl,
    // Local servers need no key, but the SDK refuses to start without one.
    apiKey: options.apiKey ?? 'not-needed',
    timeout: options.timeoutMs ?? 30_000,
    maxRetries: 1,
  });
  const voices: VoiceInfo[] = (options.voices ?? OPENAI_DEFAULT_VOICES).map((name) => ({
    id: `${ID_PREFIX}${name}`,
    name: name.charAt(0).toUpperCase() + name.slice(1),
    // OpenAI voices speak many languages; their accent is American English.
    language: 'en-US',
    gender: 'neutral',
    provider: 'openai',
    description: `OpenAI-compatible voice "${name}" (${options.model}); multilingual`,
  }));
  const known = new Set(voices.map((v) => v.id));

  return {
    name: 'openai',
    voices: () => voices,
    async synthesize(text: string, voiceId: string): Promise<SynthesizedAudio> {
      if (!known.has(voiceId)) throw new Error(`openai TTS has no voice ${voiceId}`);
      const response = await client.audio.speech.create({
        model: options.model,
        voice: voiceId.slice(ID_PREFIX.length),
        input: text,
        response_format: 'pcm',
      });
      const bytes = Buffer.from(await response.arrayBuffer());
      const samples = new Int16Array(Math.floor(bytes.length / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
      return { pcm: samples, sampleRate: OPENAI_PCM_SAMPLE_RATE };
    },
  };
}
