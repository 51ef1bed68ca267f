// One connection to the fake Realtime server: the session's configuration (session.update →
// session.updated), the input audio buffer with server VAD, the conversation's items, the
// caller's transcription and the responses, as OpenAI documents the Realtime API's events. It
// cannot hear: each committed caller turn is given the next text the test queued with `hear`.
// Audio is in the session's formats (formats.ts): what is appended is decoded from its input
// format, responses speak in its output format.
import { randomBytes } from 'node:crypto';
import type { RealtimeClientEvent, RealtimeConversationItemUserMessage } from 'openai/resources/realtime/realtime';
import { PCM_FORMAT, wireFormat } from './formats.ts';
import { type Outgoing, type RealtimeReply, type ResponseTiming, startResponse } from './response.ts';
import { createFakeVad, REALTIME_RATE } from './vad.ts';

export type RealtimeResponder = RealtimeReply | ((context: ResponderContext) => RealtimeReply);
export interface ResponderContext {
  /** The response's own instructions (response.create), else null. */
  instructions: string | null;
  /** The conversation so far: each item's role and its text (a function output's output). */
  items: Array<{ role: 'user' | 'assistant' | 'tool'; text: string }>;
  session: SessionConfig;
}

// biome-ignore lint/suspicious/noExplicitAny: the session object is arbitrary JSON merged field by field
export type SessionConfig = Record<string, any>;

export interface SessionScript {
  timing: ResponseTiming & { transcriptionDelayMs: number; sessionCreatedDelayMs: number };
  /** The texts of the next caller turns, in order. */
  heard: string[];
  replies: RealtimeResponder[];
  /** Answers a response when no reply is queued (a benchmark's endless conversation). */
  fallback?: RealtimeResponder;
}

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

export function defaultSession(intent: 'realtime' | 'transcription', model: string): SessionConfig {
  const turn_detection = { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500, create_response: true, interrupt_response: true };
  const input = { format: { type: 'audio/pcm', rate: REALTIME_RATE }, transcription: null, noise_reduction: null, turn_detection };
  if (intent === 'transcription') return { type: 'transcription', audio: { input: { ...input, transcription: { model: 'gpt-4o-transcribe' } } } };
  return {
    type: 'realtime',
    object: 'realtime.session',
    id: id('sess'),
    model,
    output_modalities: ['audio'],
    instructions: '',
    tools: [],
    tool_choice: 'auto',
    audio: { input, output: { format: { type: 'audio/pcm', rate: REALTIME_RATE }, voice: 'alloy', speed: 1 } },
  };
}

function merge(into: SessionConfig, update: SessionConfig): SessionConfig {
  const out = { ...into };
  for (const [key, value] of Object.entries(update)) {
    // A format is replaced whole (a G.711 format has no rate of its own to keep).
    const nested = key !== 'format' && value !== null && typeof value === 'object' && !Array.isArray(value) && typeof out[key] === 'object' && out[key] !== null;
    out[key] = nested ? merge(out[key], value) : value;
  }
  return out;
}

/** Why the API would refuse the session's audio formats (null: it speaks them). */
function refusedFormat(session: SessionConfig): { message: string; param: string } | null {
  for (const side of ['input', 'output'] as const) {
    const format = session.audio?.[side]?.format;
    if (format !== undefined && !wireFormat(format)) return { message: `Invalid audio format: ${JSON.stringify(format)}.`, param: `session.audio.${side}.format` };
  }
  return null;
}

export function createFakeSession(options: { intent: 'realtime' | 'transcription'; model: string; script: SessionScript; send: (event: Outgoing) => void }) {
  const { script, send } = options;
  let session = defaultSession(options.intent, options.model);
  const items: ResponderContext['items'] = [];
  const callIds = new Set<string>();
  const itemIds = new Set<string>();
  let response: ReturnType<typeof startResponse> | null = null;
  /** Milliseconds of audio in the input buffer. */
  let buffered = 0;
  let lastItem: string | null = null;
  let turnItem = id('item');
  const turnDetection = () => session.audio?.input?.turn_detection ?? null;
  const input = () => wireFormat(session.audio?.input?.format) ?? PCM_FORMAT;
  const output = () => wireFormat(session.audio?.output?.format) ?? PCM_FORMAT;
  const vad = createFakeVad(() => ({ silenceMs: turnDetection()?.silence_duration_ms ?? 500, threshold: 200 + 3000 * (turnDetection()?.threshold ?? 0.5), rate: input().rate }));
  const refuse = (message: string, code: string, clientEvent?: string, param?: string) =>
    send({ type: 'error', error: { type: 'invalid_request_error', code, message, event_id: clientEvent ?? null, param: param ?? null } });

  function respond(instructions: string | null, clientEvent?: string) {
    if (response && !response.ended) return refuse('Conversation already has an active response in progress.', 'conversation_already_has_active_response', clientEvent);
    const next = script.replies.shift() ?? script.fallback ?? { text: '' };
    const reply = typeof next === 'function' ? next({ instructions, items: [...items], session }) : next;
    const itemId = id('item');
    itemIds.add(itemId);
    response = startResponse({
      id: id('resp'),
      itemId,
      reply,
      timing: script.timing,
      format: output(),
      send,
      done: (output) => {
        for (const item of output) {
          if (item.type === 'function_call' && item.call_id) callIds.add(item.call_id);
          if (item.type === 'message') items.push({ role: 'assistant', text: reply.text ?? '' });
        }
      },
    });
  }

  function commit(viaVad: boolean) {
    const itemId = turnItem;
    turnItem = id('item');
    buffered = 0;
    itemIds.add(itemId);
    send({ type: 'input_audio_buffer.committed', item_id: itemId, previous_item_id: lastItem });
    lastItem = itemId;
    const text = script.heard.shift() ?? '';
    items.push({ role: 'user', text });
    const item: RealtimeConversationItemUserMessage = { id: itemId, object: 'realtime.item', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_audio' }] };
    send({ type: 'conversation.item.added', item, previous_item_id: null });
    transcribe(itemId, text);
    if (viaVad && session.type === 'realtime' && turnDetection()?.create_response !== false) respond(null);
  }

  function transcribe(itemId: string, text: string) {
    if (session.type === 'realtime' && !session.audio?.input?.transcription) return;
    setTimeout(() => {
      const words = text.split(/\s+/).filter(Boolean);
      for (const [i, word] of words.entries()) send({ type: 'conversation.item.input_audio_transcription.delta', item_id: itemId, content_index: 0, delta: `${i === 0 ? '' : ' '}${word}` });
      send({ type: 'conversation.item.input_audio_transcription.completed', item_id: itemId, content_index: 0, transcript: text, usage: { type: 'duration', seconds: 1 } });
    }, script.timing.transcriptionDelayMs).unref();
  }

  function append(audio: string, clientEvent?: string) {
    const pcm = input().decode(Buffer.from(audio, 'base64'));
    if (typeof pcm === 'string') return refuse(pcm, 'invalid_value', clientEvent, 'audio');
    buffered += (pcm.length * 1000) / input().rate;
    if (!turnDetection()) return;
    for (const heard of vad.push(pcm)) {
      if (heard.type === 'speech_started') {
        send({ type: 'input_audio_buffer.speech_started', audio_start_ms: heard.audioMs, item_id: turnItem });
        if (response && !response.ended && turnDetection()?.interrupt_response !== false) response.cancel('turn_detected');
      } else {
        send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: heard.audioMs, item_id: turnItem });
        commit(true);
      }
    }
  }

  function createItem(event: Extract<RealtimeClientEvent, { type: 'conversation.item.create' }>) {
    const item = event.item;
    if (item.type === 'function_call_output') {
      if (!callIds.has(item.call_id)) return refuse(`Tool call ID '${item.call_id}' not found in conversation.`, 'invalid_tool_call_id', event.event_id, 'item.call_id');
      items.push({ role: 'tool', text: item.output });
    } else if (item.type === 'message' && item.role === 'user') {
      items.push({ role: 'user', text: item.content.map((part) => ('text' in part ? part.text : '')).join('') });
    } else if (item.type === 'message' && item.role === 'system') {
      items.push({ role: 'user', text: item.content.map((part) => part.text ?? '').join('') });
    }
    const itemId = item.id ?? id('item');
    itemIds.add(itemId);
    const added = { ...item, id: itemId, object: 'realtime.item', status: 'completed' } as typeof item;
    send({ type: 'conversation.item.added', item: added, previous_item_id: lastItem });
    send({ type: 'conversation.item.done', item: added, previous_item_id: lastItem });
    lastItem = itemId;
  }

  function update(change: SessionConfig, clientEvent?: string) {
    const next = merge(session, change);
    const refused = refusedFormat(next);
    if (refused) return refuse(refused.message, 'invalid_value', clientEvent, refused.param);
    session = next;
    send({ type: 'session.updated', session: session as never });
  }

  /** Handles one client event; answers an error event for what the real server refuses. */
  function receive(event: RealtimeClientEvent) {
    switch (event.type) {
      case 'session.update':
        if (event.session.type !== session.type) return refuse(`Cannot update a ${session.type} session to a ${event.session.type} session.`, 'invalid_value', event.event_id, 'session.type');
        return update(event.session as SessionConfig, event.event_id);
      case 'input_audio_buffer.append':
        return append(event.audio, event.event_id);
      case 'input_audio_buffer.commit':
        if (buffered < 100) return refuse('Error committing input audio buffer: buffer too small. Expected at least 100ms of audio.', 'input_audio_buffer_commit_empty', event.event_id);
        return commit(false);
      case 'input_audio_buffer.clear':
        buffered = 0;
        return send({ type: 'input_audio_buffer.cleared' });
      case 'conversation.item.create':
        return createItem(event);
      case 'conversation.item.truncate':
        if (!itemIds.has(event.item_id)) return refuse(`Item with item_id not found: ${event.item_id}`, 'item_truncate_invalid_item_id', event.event_id, 'item_id');
        return send({ type: 'conversation.item.truncated', item_id: event.item_id, content_index: event.content_index, audio_end_ms: event.audio_end_ms });
      case 'response.create':
        if (session.type !== 'realtime') return refuse('A transcription session has no responses.', 'invalid_value', event.event_id);
        return respond(event.response?.instructions ?? null, event.event_id);
      case 'response.cancel':
        if (!response || response.ended) return refuse('Cancellation failed: no active response found', 'response_cancel_not_active', event.event_id);
        return response.cancel('client_cancelled');
      default:
        return refuse(`Invalid value: '${(event as { type: string }).type}'.`, 'invalid_value', (event as { event_id?: string }).event_id, 'type');
    }
  }

  return {
    receive,
    created: () => send({ type: 'session.created', session: session as never }),
    get config() {
      return session;
    },
    audioMs: () => vad.audioMs(),
    close: () => response?.cancel('client_cancelled'),
  };
}
