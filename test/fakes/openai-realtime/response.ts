// One response of the fake Realtime server, as OpenAI's server streams it: response.created, the
// output item, its audio in base64 chunks of 100 ms in the session's output format (PCM16 24 kHz,
// or G.711 at 8 kHz) interleaved with the words of its transcript, then the *.done events and
// response.done with usage; or a function call with its arguments in two deltas. A response can
// be cancelled at any point (barge-in, response.cancel): the rest is not sent and response.done
// says `cancelled`.
import type { ConversationItem, RealtimeConversationItemAssistantMessage, RealtimeConversationItemFunctionCall, RealtimeResponse, RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import type { WireFormat } from './formats.ts';
import { REALTIME_RATE } from './vad.ts';

/** What the model answers: words spoken, or a function called. */
export interface RealtimeReply {
  text?: string;
  functionCall?: { name: string; arguments: string | Record<string, unknown> };
}

export interface ResponseTiming {
  /** After response.created, before the first audio delta: the model's own first-audio time. */
  firstAudioDelayMs: number;
  /** Between audio chunks (0: as fast as the socket takes them, as the real server streams). */
  audioChunkIntervalMs: number;
  /** Spoken length of one word. */
  msPerWord: number;
}

/** Events as the fake writes them; `send` adds the event id. */
export type Outgoing = RealtimeServerEvent extends infer E ? (E extends { event_id: string } ? Omit<E, 'event_id'> : never) : never;

const CHUNK_MS = 100;

/** A spoken word's stand-in: a 220 Hz tone (never silent, so a VAD on the far side hears it). */
export function toneFor(ms: number, rate = REALTIME_RATE): Int16Array {
  const pcm = new Int16Array(Math.round((ms * rate) / 1000));
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(4000 * Math.sin((2 * Math.PI * 220 * i) / rate)) || 1;
  return pcm;
}

export function startResponse(options: {
  id: string;
  itemId: string;
  reply: RealtimeReply;
  timing: ResponseTiming;
  /** The session's output format. */
  format: WireFormat;
  send: (event: Outgoing) => void;
  /** Called once the response ended, with its output items (added to the conversation). */
  done: (output: ConversationItem[], status: RealtimeResponse['status']) => void;
}) {
  const { id, itemId, reply, timing, format, send } = options;
  const timers = new Set<NodeJS.Timeout>();
  const output: ConversationItem[] = [];
  let ended = false;
  const later = (ms: number, step: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!ended) step();
    }, ms);
    timers.add(timer);
  };
  const response = (status: RealtimeResponse['status'], usage?: RealtimeResponse['usage']): RealtimeResponse => ({
    id,
    object: 'realtime.response',
    status,
    output,
    output_modalities: ['audio'],
    conversation_id: 'conv_fake',
    ...(usage ? { usage } : {}),
  });
  const finish = (status: 'completed' | 'cancelled', reason?: 'turn_detected' | 'client_cancelled') => {
    if (ended) return;
    ended = true;
    for (const timer of timers) clearTimeout(timer);
    const words = (reply.text ?? '').split(/\s+/).filter(Boolean).length;
    send({
      type: 'response.done',
      response: {
        ...response(status, { total_tokens: 20 + words, input_tokens: 20, output_tokens: words }),
        ...(reason ? { status_details: { type: 'cancelled', reason } } : {}),
      },
    });
    options.done(output, status);
  };

  send({ type: 'response.created', response: response('in_progress') });
  if (reply.functionCall) callFunction(reply.functionCall);
  else speak(reply.text ?? '');

  function callFunction(call: NonNullable<RealtimeReply['functionCall']>) {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
    const item: RealtimeConversationItemFunctionCall & { call_id: string } = { id: itemId, object: 'realtime.item', type: 'function_call', status: 'in_progress', call_id: `call_${itemId.slice(5)}`, name: call.name, arguments: '' };
    send({ type: 'response.output_item.added', response_id: id, output_index: 0, item });
    send({ type: 'conversation.item.added', item, previous_item_id: null });
    const half = Math.ceil(args.length / 2);
    for (const delta of [args.slice(0, half), args.slice(half)]) {
      send({ type: 'response.function_call_arguments.delta', response_id: id, item_id: itemId, output_index: 0, call_id: item.call_id, delta });
    }
    send({ type: 'response.function_call_arguments.done', response_id: id, item_id: itemId, output_index: 0, call_id: item.call_id, name: call.name, arguments: args });
    const completed: RealtimeConversationItemFunctionCall = { ...item, arguments: args, status: 'completed' };
    output.push(completed);
    send({ type: 'response.output_item.done', response_id: id, output_index: 0, item: completed });
    send({ type: 'conversation.item.done', item: completed, previous_item_id: null });
    finish('completed');
  }

  function speak(text: string) {
    const words = text.split(/\s+/).filter(Boolean);
    const item: RealtimeConversationItemAssistantMessage = { id: itemId, object: 'realtime.item', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
    send({ type: 'response.output_item.added', response_id: id, output_index: 0, item });
    send({ type: 'conversation.item.added', item, previous_item_id: null });
    send({ type: 'response.content_part.added', response_id: id, item_id: itemId, output_index: 0, content_index: 0, part: { type: 'audio', transcript: '' } });
    const audio = format.encode(toneFor(Math.max(1, words.length) * timing.msPerWord, format.rate));
    const chunk = ((CHUNK_MS * format.rate) / 1000) * format.sampleBytes;
    const chunks = Math.ceil(audio.length / chunk);
    const part = { id: itemId, response_id: id, output_index: 0, content_index: 0 };
    const step = (index: number) => {
      const bytes = audio.subarray(index * chunk, (index + 1) * chunk);
      send({ type: 'response.output_audio.delta', ...partIds(part), delta: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') });
      // The words whose time has come with this chunk.
      const spoken = words.filter((_, w) => Math.floor((w * timing.msPerWord) / CHUNK_MS) === index);
      for (const word of spoken) send({ type: 'response.output_audio_transcript.delta', ...partIds(part), delta: `${word === words[0] ? '' : ' '}${word}` });
      if (index + 1 < chunks) later(timing.audioChunkIntervalMs, () => step(index + 1));
      else complete(text, part);
    };
    later(timing.firstAudioDelayMs, () => step(0));
  }

  function partIds(part: { id: string; response_id: string; output_index: number; content_index: number }) {
    return { item_id: part.id, response_id: part.response_id, output_index: part.output_index, content_index: part.content_index };
  }

  function complete(text: string, part: { id: string; response_id: string; output_index: number; content_index: number }) {
    send({ type: 'response.output_audio.done', ...partIds(part) });
    send({ type: 'response.output_audio_transcript.done', ...partIds(part), transcript: text });
    send({ type: 'response.content_part.done', ...partIds(part), part: { type: 'audio', transcript: text } });
    const item: RealtimeConversationItemAssistantMessage = { id: itemId, object: 'realtime.item', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_audio', transcript: text }] };
    output.push(item);
    send({ type: 'response.output_item.done', response_id: id, output_index: 0, item });
    send({ type: 'conversation.item.done', item, previous_item_id: null });
    finish('completed');
  }

  return {
    id,
    /** Stops the response where it is (`turn_detected`: the server's VAD; `client_cancelled`: response.cancel). */
    cancel: (reason: 'turn_detected' | 'client_cancelled') => finish('cancelled', reason),
    get ended() {
      return ended;
    },
  };
}
