import { openAiSdk } from '../openai-sdk.ts';
import type { SynthesizedAudio, TtsProvider, VoiceInfo } from '../../ports/tts.ts';

// OpenAI-compatible text to speech (`POST {baseURL}/audio/speech`) through the official SDK with a
// configurable baseURL (OpenAI, or a compatible server such as openedai-speech, Kokoro-FastAPI,
// LocalAI). Audio is asked for as `pcm`: raw 16-bit little-endian mono at 24 kHz, no decoding;
// servers send it as they synthesise, and `stream` hands each piece on as it arrives.
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
  const client = new (openAiSdk().OpenAI)({
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
  const request = (text: string, voiceId: string, signal?: AbortSignal) => {
    if (!known.has(voiceId)) throw new Error(`openai TTS has no voice ${voiceId}`);
    return client.audio.speech.create({ model: options.model, voice: voiceId.slice(ID_PREFIX.length), input: text, response_format: 'pcm' }, { signal });
  };

  return {
    name: 'openai',
    voices: () => voices,
    async synthesize(text: string, voiceId: string): Promise<SynthesizedAudio> {
      const response = await request(text, voiceId);
      return { pcm: createPcm16Decoder().decode(new Uint8Array(await response.arrayBuffer())), sampleRate: OPENAI_PCM_SAMPLE_RATE };
    },
    async *stream(text: string, voiceId: string, signal?: AbortSignal): AsyncIterable<SynthesizedAudio> {
      if (signal?.aborted) return;
      // Servers stream `pcm` as they synthesise: each piece of the body is played as it arrives.
      const reader = (await request(text, voiceId, signal).catch(endQuietlyOnAbort(signal)))?.body?.getReader();
      if (!reader) return;
      const decoder = createPcm16Decoder();
      try {
        for (;;) {
          const read = await reader.read().catch(endQuietlyOnAbort(signal));
          if (!read || read.done) return;
          const pcm = decoder.decode(read.value);
          if (pcm.length > 0) yield { pcm, sampleRate: OPENAI_PCM_SAMPLE_RATE };
        }
      } finally {
        // Stopped early (abort, or the consumer left): the connection is released, not read to its end.
        reader.cancel().catch(() => undefined);
      }
    },
  };
}

/** An abort ends a stream quietly (undefined); any other failure is thrown on. */
const endQuietlyOnAbort = (signal: AbortSignal | undefined) => (error: unknown) => {
  if (signal?.aborted) return undefined;
  throw error;
};

/**
 * Little-endian PCM16 bytes → samples, across pieces of a body: a piece may end in the middle of
 * a sample, whose first byte is kept for the next piece.
 */
export function createPcm16Decoder() {
  let carry: number | undefined;
  return {
    decode(bytes: Uint8Array): Int16Array {
      if (bytes.length === 0) return new Int16Array(0);
      const available = bytes.length + (carry === undefined ? 0 : 1);
      const samples = new Int16Array(Math.floor(available / 2));
      let at = 0;
      for (let i = 0; i < samples.length; i++) {
        const low = i === 0 && carry !== undefined ? carry : bytes[at++];
        const high = bytes[at++];
        // The Int16Array store wraps 0x8000..0xffff to the negative samples.
        samples[i] = (high << 8) | low;
      }
      carry = at < bytes.length ? bytes[at] : undefined;
      return samples;
    },
  };
}
