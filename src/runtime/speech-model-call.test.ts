import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { callerAudio, waitFor } from '../../test/fakes/openai-realtime/caller.ts';
import { type ResponderContext, startFakeRealtimeServer } from '../../test/fakes/openai-realtime/server.ts';
import { bistroAgent, builtinEngine } from '../../test/support/bistro-agent.ts';
import { createOpenAiRealtime } from '../providers/realtime/openai-realtime.ts';
import { createScaledClock } from './clock.ts';
import { createMediaPair } from '../providers/telephony/media-pair.ts';
import type { SessionObserver, TranscriptEntry } from './outcome.ts';
import type { CallMedia } from '../ports/telephony.ts';
import type { CallAgent } from './call-agent.ts';
import { createSpeechModelCall } from './speech-model-call.ts';
import { createDialogueEngine } from '../engine/engine.ts';
import { inMemoryKnowledge, recordingInvoker } from '../engine/fixtures/doubles.ts';
import { createBuiltinLlm } from '../providers/llm/builtin.ts';
import type { DialogueEngine } from '../engine/types.ts';

// A call whose agent thinks in speech, end to end in one process: the runtime over a media pair,
// the OpenAI Realtime adapter, and the fake Realtime server (which cannot hear: each caller turn
// it commits is given the next text queued with `hear`). Real time, short words (40 ms each).

const fake = await startFakeRealtimeServer({ apiKey: 'sk-call', timing: { msPerWord: 40 } });
const model = createOpenAiRealtime({ baseUrl: fake.url, apiKey: 'sk-call', model: 'gpt-realtime', transcriptionModel: 'gpt-4o-transcribe', connectTimeoutMs: 5000 });
after(() => fake.close());
afterEach(() => fake.reset());

/** Answers a "Say exactly … "text"" response with that text. */
const sayExactly = ({ instructions }: ResponderContext) => ({ text: /"(.*)"$/.exec(instructions ?? '')?.[1] ?? '' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function startCall(overrides: Partial<CallAgent> = {}, options: { machine?: boolean; verdictFirst?: boolean; model?: typeof model; engine?: DialogueEngine } = {}) {
  const clock = createScaledClock(1);
  const { stream, far } = createMediaPair();
  const seen = { clears: 0, agentFrames: 0, transfers: [] as string[], errors: [] as string[], hangups: 0 };
  far.onClear(() => seen.clears++);
  far.onAgentFrame(() => seen.agentFrames++);
  const media: CallMedia = {
    stream,
    answeredBy: options.machine ? 'machine' : 'human',
    // Twilio's asynchronous verdict that came before the media: handed over at once, while the model still opens.
    onAnsweredBy: options.verdictFirst ? (listener) => listener('machine') : undefined,
    transfer: async (to) => {
      seen.transfers.push(to);
      stream.close();
    },
    hangup: async () => {
      seen.hangups++;
      stream.close();
    },
  };
  const transcript: TranscriptEntry[] = [];
  const observer: SessionObserver = { transcript: (entry) => transcript.push(entry), transfer: () => undefined, error: (code) => seen.errors.push(code) };
  const call = createSpeechModelCall({ clock, media, model: options.model ?? model, engine: options.engine ?? builtinEngine(), agent: bistroAgent({ barge_in_min_ms: 100, ...overrides }), workspaceId: 'ws_test', variables: {}, observer, today: new Date('2026-11-28T12:00:00Z') });
  const outcome = call.run();
  /** The caller speaks for `speechMs` in real time, then is silent long enough to end the turn. */
  const speak = async (speechMs: number, silenceMs = 600) => {
    for (const frame of callerAudio([{ speechMs }])) {
      far.sendFrame(frame);
      await sleep(20);
    }
    for (const frame of callerAudio([{ silenceMs }])) far.sendFrame(frame);
  };
  const said = (role: 'agent' | 'user') => transcript.filter((e) => e.role === role).map((e) => e.text);
  return { call, outcome, transcript, seen, speak, said, far };
}

describe('a speech-to-speech call (OpenAI Realtime protocol)', () => {
  it('greets, answers the caller, runs a tool, and ends on the model calling end_call; transcript with latency', async () => {
    fake.reply(sayExactly);
    fake.hear('What time do you open?', 'Thanks, goodbye');
    fake.reply({ text: 'We open at nine.' }, { functionCall: { name: 'end_call', arguments: { reason: 'caller_goodbye' } } }, { text: 'Goodbye!' });
    const c = startCall();
    await waitFor(() => c.said('agent').length === 1);
    assert.deepEqual(c.said('agent'), ['Hello, this is Ada from the bistro. How can I help you today?']);
    await c.speak(300);
    await waitFor(() => c.said('agent').length === 2);
    await c.speak(300);
    const outcome = await c.outcome;
    assert.deepEqual([outcome.status, outcome.endReason], ['completed', 'caller_goodbye']);
    assert.deepEqual(outcome.transcript.map((e) => `${e.role}: ${e.text}`), [
      'agent: Hello, this is Ada from the bistro. How can I help you today?',
      'user: What time do you open?',
      'agent: We open at nine.',
      'user: Thanks, goodbye',
      'agent: Goodbye!',
    ]);
    assert.equal(outcome.transcript[0].latency_ms, undefined, 'the greeting answers no caller turn');
    for (const reply of [outcome.transcript[2], outcome.transcript[4]]) assert.ok(typeof reply.latency_ms === 'number' && reply.latency_ms >= 0, JSON.stringify(reply));
    assert.equal(outcome.latency?.turns, 2);
    // 13 + 4 + 1 words of 40 ms, played at 20 ms a frame, no padding between the model's chunks
    // (the resampler's filter delay trims a few samples of each reply, the last frame is padded).
    assert.equal(c.seen.agentFrames, 18 * 2);
    const connection = fake.connections.at(-1);
    assert.equal(connection?.session().audio.input.turn_detection.interrupt_response, false, 'barge-in is the runtime rule');
    assert.deepEqual(connection?.session().tools.map((t: { name: string }) => t.name), ['end_call']);
    assert.ok(connection?.received.some((e) => e.type === 'conversation.item.create' && e.item.type === 'function_call_output'));
    assert.equal(c.seen.hangups, 1);
  });

  it('a transport without mu-law (the media pair of the sandbox and tests): PCM with the model, 24 kHz both ways', async () => {
    fake.reply(sayExactly);
    const c = startCall();
    await waitFor(() => c.said('agent').length === 1);
    const update = fake.connections.at(-1)?.received[0];
    const audio = update?.type === 'session.update' && update.session.type === 'realtime' ? update.session.audio : undefined;
    assert.deepEqual([audio?.input?.format, audio?.output?.format], [{ type: 'audio/pcm', rate: 24000 }, { type: 'audio/pcm', rate: 24000 }]);
    assert.ok(c.seen.agentFrames > 0);
    c.call.end('api_hangup');
    assert.equal((await c.outcome).endReason, 'api_hangup');
  });

  it('barge-in: the caller talks over the agent for barge_in_min_ms; playback cleared, the model told what was heard, the words kept', async () => {
    fake.reply(sayExactly);
    fake.hear('Stop, I want a table');
    fake.reply({ text: 'Sure, for how many?' });
    // Long words (150 ms): the greeting still plays when the caller cuts in, even on a busy machine.
    fake.set({ msPerWord: 150 });
    const c = startCall({ first_message: 'Hello and welcome to the bistro where we serve fresh pasta every single day of the week' });
    await waitFor(() => c.seen.agentFrames >= 5);
    await c.speak(200);
    await waitFor(() => c.said('agent').length === 2);
    const cut = c.transcript[0];
    assert.equal(cut.interrupted, true);
    assert.ok(cut.text.length > 0 && 'Hello and welcome to the bistro where we serve fresh pasta every single day of the week'.startsWith(cut.text), cut.text);
    assert.ok(cut.text.split(' ').length < 17, 'only the words played');
    assert.equal(c.seen.clears, 1);
    const truncate = fake.connections.at(-1)?.received.find((e) => e.type === 'conversation.item.truncate');
    assert.ok(truncate && truncate.type === 'conversation.item.truncate' && truncate.audio_end_ms > 0 && truncate.audio_end_ms < 17 * 150, JSON.stringify(truncate));
    assert.deepEqual(c.said('user'), ['Stop, I want a table']);
    assert.equal(c.said('agent')[1], 'Sure, for how many?');
    c.call.end('api_hangup');
    assert.equal((await c.outcome).endReason, 'api_hangup');
    fake.set({ msPerWord: 40 });
  });

  it('searches the knowledge base and calls a function, then speaks what they returned', async () => {
    const knowledge = inMemoryKnowledge([{ knowledge_base_id: 'kb_bistro', source_id: 'src_1', chunk_id: 'chk_1', text: 'The bistro opens at nine and closes at ten.' }]);
    const invoker = recordingInvoker({ book_table: (args) => ({ status: 201, body: { confirmation: `T-${String(args.people)}` } }) });
    const engine = createDialogueEngine({ llm: createBuiltinLlm(), knowledge, functions: invoker });
    const bookTable = { name: 'book_table', description: 'Books a table', url: 'https://bistro.example/book', method: 'POST' as const, parameters: { type: 'object', properties: { people: { type: 'number' } } }, timeout_ms: 5000 };
    const lastOutput = (items: ResponderContext['items']) => JSON.parse(items.at(-1)?.text ?? '{}');
    fake.reply(
      sayExactly,
      { functionCall: { name: 'search_knowledge_base', arguments: { query: 'opening hours' } } },
      ({ items }) => ({ text: lastOutput(items).results[0].text }),
      { functionCall: { name: 'book_table', arguments: { people: 2 } } },
      ({ items }) => ({ text: `Booked, confirmation ${lastOutput(items).body.confirmation}.` }),
    );
    fake.hear('When are you open?', 'Book a table for two');
    const c = startCall({ knowledge_base_ids: ['kb_bistro'], functions: [bookTable] }, { engine });
    await waitFor(() => c.said('agent').length === 1);
    await c.speak(300);
    await waitFor(() => c.said('agent').length === 2);
    await c.speak(300);
    await waitFor(() => c.said('agent').length === 3);
    assert.deepEqual(c.said('agent').slice(1), ['The bistro opens at nine and closes at ten.', 'Booked, confirmation T-2.']);
    assert.deepEqual(knowledge.searches.map((search) => [search.workspaceId, search.knowledgeBaseIds, search.query]), [['ws_test', ['kb_bistro'], 'opening hours']]);
    assert.deepEqual(invoker.calls.map((call) => [call.name, call.args]), [['book_table', { people: 2 }]]);
    // Each answer after a tool is still the answer to the caller's turn: its latency counts the tool.
    assert.ok(c.transcript.filter((e) => e.role === 'agent').slice(1).every((e) => typeof e.latency_ms === 'number'));
    assert.deepEqual(fake.connections.at(-1)?.session().tools.map((tool: { name: string }) => tool.name), ['end_call', 'search_knowledge_base', 'book_table']);
    c.call.end('api_hangup');
    await c.outcome;
  });

  it('an agent that may not be interrupted: speech over it is no turn, the answer the model starts to it is cancelled', async () => {
    fake.set({ msPerWord: 120 });
    fake.reply(sayExactly, { text: 'Nobody hears this' }, { text: 'We open at nine.' });
    fake.hear('Hello hello', 'When do you open?');
    const c = startCall({ interruptible: false, first_message: 'Hello and welcome to the bistro where we serve fresh pasta every single day of the week' });
    await waitFor(() => c.seen.agentFrames >= 5);
    await c.speak(300);
    await waitFor(() => c.said('agent').length === 1);
    await c.speak(300);
    await waitFor(() => c.said('agent').length === 2);
    assert.deepEqual(c.said('agent'), ['Hello and welcome to the bistro where we serve fresh pasta every single day of the week', 'We open at nine.']);
    assert.equal(c.transcript[0].interrupted, undefined);
    assert.equal(c.seen.clears, 0);
    assert.equal(fake.connections.at(-1)?.received.filter((e) => e.type === 'response.cancel').length, 1);
    c.call.end('api_hangup');
    await c.outcome;
    fake.set({ msPerWord: 40 });
  });

  it('transfers when the model calls transfer_call, after saying so', async () => {
    fake.reply(sayExactly);
    fake.hear('Can I talk to a person?');
    fake.reply({ functionCall: { name: 'transfer_call', arguments: { reason: 'wants a person' } } }, { text: 'Transferring you now.' });
    const c = startCall({ transfer_number: '+15550100999' });
    await waitFor(() => c.said('agent').length === 1);
    await c.speak(300);
    const outcome = await c.outcome;
    assert.deepEqual([outcome.status, outcome.transferredTo, c.seen.transfers], ['transferred', '+15550100999', ['+15550100999']]);
    assert.equal(c.said('agent').at(-1), 'Transferring you now.');
  });

  it('an end-call phrase from the caller ends the call after the agent answers', async () => {
    fake.reply(sayExactly);
    fake.hear('ok bye now');
    fake.reply({ text: 'Have a nice day.' });
    const c = startCall({ end_call_phrases: ['bye now'] });
    await waitFor(() => c.said('agent').length === 1);
    await c.speak(300);
    const outcome = await c.outcome;
    assert.deepEqual([outcome.endReason, c.said('agent').at(-1)], ['caller_goodbye', 'Have a nice day.']);
  });

  it('silence: asks whether the caller is still there, then ends', async () => {
    fake.reply(sayExactly, sayExactly);
    const c = startCall({ silence_timeout_seconds: 0.3 });
    const outcome = await c.outcome;
    assert.deepEqual([outcome.status, outcome.endReason], ['completed', 'silence_timeout']);
    assert.deepEqual(c.said('agent'), ['Hello, this is Ada from the bistro. How can I help you today?', 'Are you still there?']);
  });

  it('a machine answers: the voicemail message is left, then the call ends as voicemail', async () => {
    fake.reply(sayExactly);
    const c = startCall({ voicemail: { action: 'leave_message', message: 'Please call the bistro back.' } }, { machine: true });
    const outcome = await c.outcome;
    assert.deepEqual([outcome.status, c.said('agent')], ['voicemail', ['Please call the bistro back.']]);
  });

  it('a machine verdict that came while the model opened: the message is left, not the greeting', async () => {
    fake.reply(sayExactly, sayExactly);
    const c = startCall({ voicemail: { action: 'leave_message', message: 'Please call the bistro back.' }, silence_timeout_seconds: 1 }, { verdictFirst: true });
    const outcome = await c.outcome;
    assert.deepEqual([outcome.status, c.said('agent')], ['voicemail', ['Please call the bistro back.']]);
  });

  it('a model that cannot be reached fails the call with llm_failed; one that goes away mid-call too', async () => {
    const nowhere = createOpenAiRealtime({ baseUrl: 'http://127.0.0.1:9/v1', model: 'gpt-realtime', transcriptionModel: 'x', connectTimeoutMs: 2000 });
    const c = startCall({}, { model: nowhere });
    const outcome = await c.outcome;
    assert.deepEqual([outcome.status, outcome.error?.code], ['failed', 'llm_failed']);
    assert.equal(c.seen.hangups, 1, 'the caller is not left on the line');
    fake.reply(sayExactly);
    const d = startCall();
    await waitFor(() => d.said('agent').length === 1);
    fake.connections.at(-1)?.disconnect();
    const gone = await d.outcome;
    assert.deepEqual([gone.status, gone.error?.code], ['failed', 'llm_failed']);
    assert.ok(d.seen.errors.includes('llm_failed'));
  });
});
