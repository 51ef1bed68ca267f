import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { startFakeRealtimeServer } from '../../../test/fakes/openai-realtime/server.ts';
import { callerAudio, collect, waitFor } from '../../../test/fakes/openai-realtime/caller.ts';
import type { SpeechModelEvent, SpeechModelSessionOptions } from '../../ports/speech-model.ts';
import { RealtimeRefused, realtimeUrl } from './link.ts';
import { createOpenAiRealtime } from './openai-realtime.ts';

// The speech-to-speech adapter against a local server that speaks OpenAI's Realtime protocol
// (test/fakes/openai-realtime) over plain ws://, as a self-hosted server on a LAN would.

const fake = await startFakeRealtimeServer({ apiKey: 'sk-test' });
const model = createOpenAiRealtime({ baseUrl: fake.url, apiKey: 'sk-test', model: 'gpt-realtime', transcriptionModel: 'gpt-4o-transcribe', connectTimeoutMs: 5000 });
const options: SpeechModelSessionOptions = {
  instructions: 'You are the front desk of Bella Pizza.',
  voice: 'marin',
  language: 'en-US',
  tools: [{ name: 'lookup_order', description: 'Finds an order', parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } }],
  turnEndSilenceMs: 400,
};

after(() => fake.close());

describe('OpenAI Realtime speech-to-speech adapter', () => {
  before(() => fake.set({ firstAudioDelayMs: 0, audioChunkIntervalMs: 0, msPerWord: 300 }));
  afterEach(() => fake.reset());

  it('maps the base URL to the WebSocket: http → ws, https → wss, with the model', () => {
    assert.equal(realtimeUrl('http://10.0.0.5:8080/v1', { model: 'gpt-realtime' }), 'ws://10.0.0.5:8080/v1/realtime?model=gpt-realtime');
    assert.equal(realtimeUrl('https://api.openai.com/v1/', { intent: 'transcription' }), 'wss://api.openai.com/v1/realtime?intent=transcription');
  });

  it('configures the session: prompt, voice, tools, 24 kHz PCM both ways, server VAD at the agent silence, transcription in its language', async () => {
    const session = await model.open(options);
    const connection = fake.connections.at(-1);
    assert.ok(connection);
    assert.equal(connection.path, '/v1/realtime?model=gpt-realtime');
    assert.equal(connection.authorization, 'Bearer sk-test');
    assert.equal(connection.received[0].type, 'session.update');
    const config = connection.session();
    assert.equal(config.instructions, options.instructions);
    assert.deepEqual(config.audio.output, { format: { type: 'audio/pcm', rate: 24000 }, voice: 'marin', speed: 1 });
    assert.deepEqual(config.audio.input.format, { type: 'audio/pcm', rate: 24000 });
    assert.deepEqual(config.audio.input.transcription, { model: 'gpt-4o-transcribe', language: 'en' });
    assert.equal(config.audio.input.turn_detection.silence_duration_ms, 400);
    assert.equal(config.audio.input.turn_detection.interrupt_response, true);
    assert.deepEqual(config.tools, [{ type: 'function', ...options.tools[0] }]);
    session.close();
  });

  it('a caller turn: speech start and stop on the audio clock, the caller transcript, the agent audio at 16 kHz with its words, usage', async () => {
    const session = await model.open(options);
    const events = collect<SpeechModelEvent>((listener) => session.onEvent(listener));
    fake.hear('What are your hours?');
    fake.reply({ text: 'We open at nine.' });
    for (const frame of callerAudio([{ speechMs: 600 }, { silenceMs: 600 }])) assert.equal(session.sendAudio(frame), true);
    await waitFor(() => events.some((e) => e.type === 'response_done'));
    await waitFor(() => events.some((e) => e.type === 'user_transcript' && e.final));
    const started = events.find((e) => e.type === 'speech_started');
    const stopped = events.find((e) => e.type === 'speech_stopped');
    assert.ok(started && started.audioMs <= 20, JSON.stringify(started));
    assert.ok(stopped && stopped.audioMs >= 600 + 400 && stopped.audioMs <= 600 + 400 + 40, JSON.stringify(stopped));
    const userLines = events.filter((e) => e.type === 'user_transcript').map((e) => [e.text, e.final]);
    assert.deepEqual(userLines.at(-1), ['What are your hours?', true]);
    assert.ok(userLines.some(([text, final]) => !final && text === 'What are'), 'interim text grows word by word');
    const samples = events.reduce((sum, e) => sum + (e.type === 'audio' ? e.pcm.length : 0), 0);
    // Four words of 300 ms at 16 kHz, less the resampler's filter delay (a few ms).
    assert.ok(samples > 16 * 1200 - 16 * 10 && samples <= 16 * 1200, `${samples} samples`);
    const agent = events.filter((e) => e.type === 'agent_transcript');
    assert.deepEqual(agent.at(-1) && [agent.at(-1)?.text, agent.at(-1)?.final], ['We open at nine.', true]);
    assert.ok(agent.some((e) => !e.final && e.text === 'We open'), 'the agent words as they are spoken');
    assert.deepEqual(events.filter((e) => e.type === 'response_done').map((e) => e.type === 'response_done' && [e.status, e.outputTokens]), [['completed', 4]]);
    assert.ok(events.findIndex((e) => e.type === 'response_started') < events.findIndex((e) => e.type === 'audio'));
    session.close();
  });

  it('a function call: its arguments, then the result sent back answered by a new response', async () => {
    const session = await model.open(options);
    const events = collect<SpeechModelEvent>((listener) => session.onEvent(listener));
    fake.hear('Where is order 42?');
    fake.reply({ functionCall: { name: 'lookup_order', arguments: { order_id: '42' } } }, ({ items }) => ({ text: `It says ${JSON.parse(items.at(-1)?.text ?? '{}').status}.` }));
    for (const frame of callerAudio([{ speechMs: 400 }, { silenceMs: 500 }])) session.sendAudio(frame);
    const call = await waitFor(() => events.find((e) => e.type === 'function_call'));
    assert.equal(call.type === 'function_call' && call.name, 'lookup_order');
    assert.deepEqual(call.type === 'function_call' && JSON.parse(call.arguments), { order_id: '42' });
    assert.ok(call.type === 'function_call');
    session.functionResult(call.callId, JSON.stringify({ status: 'shipped' }));
    const spoken = await waitFor(() => events.find((e) => e.type === 'agent_transcript' && e.final));
    assert.equal(spoken.type === 'agent_transcript' && spoken.text, 'It says shipped.');
    const received = fake.connections.at(-1)?.received.map((e) => e.type) ?? [];
    assert.deepEqual(received.filter((t) => t !== 'input_audio_buffer.append'), ['session.update', 'conversation.item.create', 'response.create']);
    session.close();
  });

  it('barge-in: the server cancels the response it is streaming; interrupt truncates what the caller heard and cancels a response in flight', async () => {
    fake.set({ audioChunkIntervalMs: 40 });
    const session = await model.open(options);
    const events = collect<SpeechModelEvent>((listener) => session.onEvent(listener));
    fake.hear('Hi');
    fake.reply({ text: 'Hello and welcome to Bella Pizza where every slice is made fresh' });
    for (const frame of callerAudio([{ speechMs: 300 }, { silenceMs: 500 }])) session.sendAudio(frame);
    const audio = await waitFor(() => events.find((e) => e.type === 'audio'));
    for (const frame of callerAudio([{ speechMs: 200 }])) session.sendAudio(frame);
    const cancelled = await waitFor(() => events.find((e) => e.type === 'response_done'));
    assert.equal(cancelled.type === 'response_done' && cancelled.status, 'cancelled');
    assert.ok(audio.type === 'audio');
    session.interrupt({ itemId: audio.itemId, audioMs: 180 });
    const connection = fake.connections.at(-1);
    await waitFor(() => connection?.sent.find((e) => e.type === 'conversation.item.truncated'));
    const truncate = connection?.received.find((e) => e.type === 'conversation.item.truncate');
    assert.deepEqual(truncate && { ...truncate }, { type: 'conversation.item.truncate', item_id: audio.itemId, content_index: 0, audio_end_ms: 180 });
    assert.equal(connection?.received.some((e) => e.type === 'response.cancel'), false, 'nothing to cancel: the server already did');
    // A response the agent asked for itself, cut by the caller before the server's VAD hears them.
    fake.reply({ text: 'One more thing about our opening hours today' });
    session.respond('Say exactly: one more thing.');
    await waitFor(() => events.filter((e) => e.type === 'response_started').length === 2);
    session.interrupt();
    await waitFor(() => events.filter((e) => e.type === 'response_done').length === 2);
    assert.equal(events.filter((e) => e.type === 'response_done').at(-1)?.type === 'response_done' && (events.filter((e) => e.type === 'response_done').at(-1) as { status: string }).status, 'cancelled');
    assert.equal(connection?.received.filter((e) => e.type === 'response.cancel').length, 1);
    session.close();
    fake.set({ audioChunkIntervalMs: 0 });
  });

  it('a typed line and a first message: added to the conversation and answered; instructions for one response only', async () => {
    const session = await model.open(options);
    const events = collect<SpeechModelEvent>((listener) => session.onEvent(listener));
    fake.reply(({ instructions }) => ({ text: instructions?.replace('Say exactly: ', '') ?? '' }), ({ items }) => ({ text: `You typed ${items.at(-1)?.text}` }));
    session.respond('Say exactly: Hello from Bella Pizza.');
    await waitFor(() => events.some((e) => e.type === 'agent_transcript' && e.final));
    session.sendText('menu please');
    await waitFor(() => events.filter((e) => e.type === 'agent_transcript' && e.final).length === 2);
    assert.deepEqual(
      events.filter((e) => e.type === 'agent_transcript' && e.final).map((e) => e.type === 'agent_transcript' && e.text),
      ['Hello from Bella Pizza.', 'You typed menu please'],
    );
    session.close();
  });

  it('errors: a refused event is reported and the session goes on; a closed server ends it', async () => {
    const session = await model.open(options);
    const events = collect<SpeechModelEvent>((listener) => session.onEvent(listener));
    session.functionResult('call_unknown', '{}');
    const error = await waitFor(() => events.find((e) => e.type === 'error'));
    assert.deepEqual(error.type === 'error' && error.code, 'invalid_tool_call_id');
    fake.connections.at(-1)?.disconnect();
    const closed = await waitFor(() => events.find((e) => e.type === 'closed'));
    assert.equal(closed.type, 'closed');
    assert.equal(session.sendAudio(new Int16Array(320)), false, 'audio after the end is not sent');
  });

  it('a model that stops reading: the caller audio waiting in the socket is bounded, the rest dropped', async () => {
    const session = await model.open(options);
    fake.connections.at(-1)?.stall();
    const frame = callerAudio([{ speechMs: 20 }])[0];
    let sent = 0;
    while (sent < 100_000 && session.sendAudio(frame)) sent++;
    assert.ok(sent > 0 && sent < 100_000, `${sent} frames sent before the bound`);
    assert.equal(session.sendAudio(frame), false, 'still over the bound');
    session.close();
  });

  it('refuses to open: a wrong key (HTTP 401), no server, an abort, a server that never configures', async () => {
    const wrongKey = createOpenAiRealtime({ baseUrl: fake.url, apiKey: 'sk-wrong', model: 'gpt-realtime', transcriptionModel: 'x', connectTimeoutMs: 5000 });
    await assert.rejects(wrongKey.open(options), (error: RealtimeRefused) => error instanceof RealtimeRefused && error.code === 'http_401');
    const nowhere = createOpenAiRealtime({ baseUrl: 'http://127.0.0.1:9/v1', model: 'gpt-realtime', transcriptionModel: 'x', connectTimeoutMs: 5000 });
    await assert.rejects(nowhere.open(options), (error: RealtimeRefused) => error.code === 'connection_failed');
    await assert.rejects(model.open({ ...options, signal: AbortSignal.abort() }), (error: RealtimeRefused) => error.code === 'aborted');
    fake.set({ sessionCreatedDelayMs: 1000 });
    const impatient = createOpenAiRealtime({ baseUrl: fake.url, apiKey: 'sk-test', model: 'gpt-realtime', transcriptionModel: 'x', connectTimeoutMs: 100 });
    await assert.rejects(impatient.open(options), (error: RealtimeRefused) => error.code === 'timeout');
    fake.set({ sessionCreatedDelayMs: 0 });
  });
});
