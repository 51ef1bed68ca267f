import { SAMPLE_RATE } from '../../platform/audio/frames.ts';
import { loadResamplers } from '../../platform/audio/resample.ts';
import type { StreamingRecognitionEvent, StreamingSpeechToText } from '../../ports/speech-model.ts';
import { languageCode } from '../../platform/text.ts';
import { callerEvents, openRealtimeLink, pcmToBase64, type RealtimeLinkConfig } from './link.ts';

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
      const caller = callerEvents();
      let listener: (event: StreamingRecognitionEvent) => void = () => undefined;
      let closed = false;
      link.onEvent((event) => {
        const heard = caller(event);
        if (heard?.type === 'transcript') return listener(heard.final ? { type: 'final', itemId: heard.itemId, text: heard.text } : { type: 'interim', itemId: heard.itemId, text: heard.text });
        if (heard) return listener(heard);
        switch (event.type) {
          case 'conversation.item.input_audio_transcription.failed':
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
