import { openAiSdk } from '../openai-sdk.ts';
import { pcm16ToWav } from '../../platform/audio/wav.ts';
import type { SpeechToText } from '../../ports/stt.ts';
import { languageCode } from '../../platform/text.ts';

// Speech to text through any OpenAI-compatible POST /audio/transcriptions (OpenAI, Groq, a
// self-hosted faster-whisper or whisper.cpp server), with the `openai` SDK: one utterance, cut by
// the call's VAD, sent as a 16 kHz mono WAV; the call's language as ISO 639-1.

export interface OpenAiSttConfig {
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Per request; a slower answer is a failure (the call goes on and asks the caller to repeat). */
  timeoutMs: number;
}

export function createOpenAiStt(config: OpenAiSttConfig): SpeechToText {
  const client = new (openAiSdk().OpenAI)({ baseURL: config.baseUrl, apiKey: config.apiKey ?? 'unused', timeout: config.timeoutMs, maxRetries: 0 });
  return {
    stateless: true,
    async transcribe(audio, options) {
      const file = await openAiSdk().toFile(pcm16ToWav(audio), 'utterance.wav', { type: 'audio/wav' });
      const result = await client.audio.transcriptions.create(
        { file, model: config.model, language: languageCode(options.language), response_format: 'json' },
        { signal: options.signal },
      );
      return result.text.trim();
    },
  };
}
