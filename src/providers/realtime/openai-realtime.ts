import { SAMPLE_RATE } from '../../platform/audio/frames.ts';
import { loadResamplers, type Resampler } from '../../platform/audio/resample.ts';
import type { AudioCodec } from '../../ports/media.ts';
import type { SpeechModel, SpeechModelEvent, SpeechModelSession, SpeechModelSessionOptions } from '../../ports/speech-model.ts';
import { languageCode } from '../../platform/text.ts';
import { bytesFromBase64, bytesToBase64, callerEvents, openRealtimeLink, pcmFromBase64, pcmToBase64, type RealtimeLink, type RealtimeLinkConfig } from './link.ts';

// A speech-to-speech agent's brain over the OpenAI Realtime API (`llm.provider: "openai-realtime"`):
// the caller's audio goes to the model as it comes (PCM16 24 kHz), the model's own server VAD ends
// the caller's turn and interrupts its response when the caller speaks, and its audio, transcript,
// function calls and usage come back as SpeechModelEvents in the runtime's 16 kHz. A `mulaw`
// session asks for G.711 μ-law at 8 kHz both ways (the GA protocol's `audio/pcmu`): the carrier's
// bytes go to the model and the model's come back untouched, with no resampler at all.

export interface OpenAiRealtimeConfig extends RealtimeLinkConfig {
  /** `gpt-realtime` unless the agent names another. */
  model: string;
  /** The model that transcribes the caller for the transcript. */
  transcriptionModel: string;
}

const RATE = 24_000 as const;
const formatOf = (codec: AudioCodec | undefined) => (codec === 'mulaw' ? ({ type: 'audio/pcmu' } as const) : ({ type: 'audio/pcm', rate: RATE } as const));

export function createOpenAiRealtime(config: OpenAiRealtimeConfig): SpeechModel {
  return {
    name: 'openai-realtime',
    async open(options) {
      const resampler = await loadResamplers();
      const link = await openRealtimeLink(config, { model: config.model }, sessionOf(config, options), options.signal);
      return speechSession(link, resampler, options.codec ?? 'pcm16');
    },
  };
}

function sessionOf(config: OpenAiRealtimeConfig, options: SpeechModelSessionOptions) {
  const format = formatOf(options.codec);
  return {
    type: 'realtime' as const,
    instructions: options.instructions,
    output_modalities: ['audio' as const],
    audio: {
      input: {
        format,
        transcription: { model: config.transcriptionModel, language: languageCode(options.language) },
        turn_detection: { type: 'server_vad' as const, silence_duration_ms: options.turnEndSilenceMs, create_response: true, interrupt_response: options.interruptResponse ?? true },
      },
      output: { format, voice: options.voice },
    },
    tools: options.tools.map((tool) => ({ type: 'function' as const, name: tool.name, description: tool.description, parameters: tool.parameters })),
    tool_choice: 'auto' as const,
  };
}

/** The agent's items as they stream: each one's text so far and its own downsampler (24 kHz → 16 kHz). */
function agentItems(resampler: (fromRate: number, toRate: number) => Resampler) {
  const texts = new Map<string, string>();
  const downsamplers = new Map<string, Resampler>();
  const finish = (itemId: string) => {
    texts.delete(itemId);
    downsamplers.get(itemId)?.close();
    downsamplers.delete(itemId);
  };
  return {
    text(itemId: string, delta: string): string {
      const text = (texts.get(itemId) ?? '') + delta;
      texts.set(itemId, text);
      return text;
    },
    pcm(itemId: string, delta: string): Int16Array {
      let downsample = downsamplers.get(itemId);
      if (!downsample) {
        downsample = resampler(RATE, SAMPLE_RATE);
        downsamplers.set(itemId, downsample);
      }
      return downsample.process(pcmFromBase64(delta));
    },
    finish,
    finishAll: () => {
      for (const itemId of [...downsamplers.keys()]) finish(itemId);
    },
  };
}

function speechSession(link: RealtimeLink, resampler: (fromRate: number, toRate: number) => Resampler, codec: AudioCodec): SpeechModelSession {
  // Made on the first PCM audio: a μ-law session has none.
  let upsample: Resampler | null = null;
  let listener: (event: SpeechModelEvent) => void = () => undefined;
  const emit = (event: SpeechModelEvent) => listener(event);
  const items = agentItems(resampler);
  let activeResponse: string | null = null;
  let closed = false;

  const caller = callerEvents();
  link.onEvent((event) => {
    const heard = caller(event);
    if (heard?.type === 'transcript') return emit({ type: 'user_transcript', itemId: heard.itemId, text: heard.text, final: heard.final });
    if (heard) return emit(heard);
    switch (event.type) {
      case 'response.created':
        activeResponse = event.response.id ?? null;
        return emit({ type: 'response_started', responseId: event.response.id ?? '' });
      case 'response.output_audio.delta':
        if (codec === 'mulaw') return emit({ type: 'audio_mulaw', responseId: event.response_id, itemId: event.item_id, mulaw: bytesFromBase64(event.delta) });
        return emit({ type: 'audio', responseId: event.response_id, itemId: event.item_id, pcm: items.pcm(event.item_id, event.delta) });
      case 'response.output_audio_transcript.delta':
        return emit({ type: 'agent_transcript', responseId: event.response_id, itemId: event.item_id, text: items.text(event.item_id, event.delta), final: false });
      case 'response.output_audio_transcript.done':
        items.finish(event.item_id);
        return emit({ type: 'agent_transcript', responseId: event.response_id, itemId: event.item_id, text: event.transcript, final: true });
      case 'response.function_call_arguments.done':
        return emit({ type: 'function_call', responseId: event.response_id, callId: event.call_id, name: event.name, arguments: event.arguments });
      case 'response.done': {
        if (activeResponse === event.response.id) activeResponse = null;
        const status = event.response.status === 'in_progress' || !event.response.status ? 'completed' : event.response.status;
        for (const item of event.response.output ?? []) if (item.id) items.finish(item.id);
        return emit({ type: 'response_done', responseId: event.response.id ?? '', status, inputTokens: event.response.usage?.input_tokens ?? 0, outputTokens: event.response.usage?.output_tokens ?? 0 });
      }
      case 'error':
        return emit({ type: 'error', code: event.error.code ?? null, message: event.error.message });
      default:
        return;
    }
  });
  link.onClose((reason) => {
    closed = true;
    upsample?.close();
    items.finishAll();
    emit({ type: 'closed', reason });
  });

  return {
    onEvent: (next) => {
      listener = next;
    },
    sendAudio: (pcm) => {
      if (closed) return false;
      upsample ??= resampler(SAMPLE_RATE, RATE);
      return link.sendBounded({ type: 'input_audio_buffer.append', audio: pcmToBase64(upsample.process(pcm)) });
    },
    sendMulaw: (mulaw) => !closed && link.sendBounded({ type: 'input_audio_buffer.append', audio: bytesToBase64(mulaw) }),
    respond: (instructions) => link.send({ type: 'response.create', response: instructions ? { instructions } : {} }),
    sendText: (text) => {
      link.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
      link.send({ type: 'response.create' });
    },
    functionResult: (callId, output) => {
      link.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output } });
      link.send({ type: 'response.create' });
    },
    interrupt: (heard) => {
      if (activeResponse) link.send({ type: 'response.cancel' });
      if (heard) link.send({ type: 'conversation.item.truncate', item_id: heard.itemId, content_index: 0, audio_end_ms: Math.max(0, Math.round(heard.audioMs)) });
    },
    close: () => link.close(),
  };
}
