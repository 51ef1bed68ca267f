import { SAMPLE_RATE } from '../../platform/audio/frames.ts';
import { loadResamplers } from '../../platform/audio/resample.ts';
import type { StreamingRecognitionEvent, StreamingSpeechToText } from '../../ports/speech-model.ts';
import { languageCode, openRealtimeLink, pcmToBase64, type RealtimeLinkConfig } from './link.ts';

// Streaming recognition (`STT_STREAMING=realtime`): one Realtime transcription session per call
// (`?intent=transcription`), fed the caller's audio as it comes. The server's VAD cuts the turns;
// each utterance's text grows in interim results and ends in a final one.

export interface OpenAiRealtimeSttConfig extends RealtimeLinkConfig {
  /** The transcription model (`gpt-4o-transcribe`, `gpt-4o-mini-transcribe`, `whisper-1`). */
  model: string;
}

const RATE = 24_000 as const;

export function createOpenAiRealtimeStt(config: OpenAiRealtimeSttConfig): StreamingSpeechToText {
  return {
    name: 'openai-realtime',
    async open(options) {
      const resampler = await loadResamplers();
      const session = {
        type: 'transcription' as const,
        audio: {
          input: {
            format: { type: 'audio/pcm' as const, rate: RATE },
            transcription: { model: config.model, language: languageCode(options.language) },
            turn_detection: { type: 'server_vad' as const, silence_duration_ms: options.turnEndSilenceMs },
          },
        },
      };
      const link = await openRealtimeLink(config, { intent: 'transcription' }, session, options.signal);
      const upsample = resampler(SAMPLE_RATE, RATE);
      const texts = new Map<string, string>();
      let listener: (event: StreamingRecognitionEvent) => void = () => undefined;
      let closed = false;
      link.onEvent((event) => {
        switch (event.type) {
          case 'input_audio_buffer.speech_started':
            return listener({ type: 'speech_started', audioMs: event.audio_start_ms });
          case 'input_audio_buffer.speech_stopped':
            return listener({ type: 'speech_stopped', audioMs: event.audio_end_ms });
          case 'conversation.item.input_audio_transcription.delta': {
            const text = (texts.get(event.item_id) ?? '') + (event.delta ?? '');
            texts.set(event.item_id, text);
            return listener({ type: 'interim', itemId: event.item_id, text });
          }
          case 'conversation.item.input_audio_transcription.completed':
            texts.delete(event.item_id);
            return listener({ type: 'final', itemId: event.item_id, text: event.transcript.trim() });
          case 'conversation.item.input_audio_transcription.failed':
            texts.delete(event.item_id);
            return listener({ type: 'error', code: event.error.code ?? null, message: event.error.message ?? 'transcription failed' });
          case 'error':
            return listener({ type: 'error', code: event.error.code ?? null, message: event.error.message });
          default:
            return;
        }
      });
      link.onClose((reason) => {
        closed = true;
        upsample.close();
        listener({ type: 'closed', reason });
      });
      return {
        onEvent: (next) => {
          listener = next;
        },
        sendAudio: (pcm) => !closed && link.sendBounded({ type: 'input_audio_buffer.append', audio: pcmToBase64(upsample.process(pcm)) }),
        close: () => link.close(),
      };
    },
  };
}
