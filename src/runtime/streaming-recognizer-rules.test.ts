import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import type { StreamingRecognitionEvent, StreamingRecognitionSession } from '../ports/speech-model.ts';
import { createMediaPair } from '../providers/telephony/media-pair.ts';
import { createStreamingRecognizer } from './streaming-recognizer.ts';

// The streaming recogniser's rules on a session driven event by event: when a turn's transcript is
// ready (every utterance ended and finalised, or the session closed), the grace for words not yet
// reported, the errors told, the interim results, the audio teed and the session closed
// (streaming-recognizer.test.ts runs it against the fake Realtime server).

function session() {
  let listener: (event: StreamingRecognitionEvent) => void = () => {};
  const sent: number[] = [];
  let closes = 0;
  const port: StreamingRecognitionSession = {
    onEvent: (l) => {
      listener = l;
    },
    sendAudio: (pcm) => sent.push(pcm.length) > 0,
    close: () => {
      closes++;
    },
  };
  return { port, emit: (event: StreamingRecognitionEvent) => listener(event), sent, closes: () => closes };
}

const transcribe = (stt: { transcribe: (a: Int16Array, o: { language: string; signal?: AbortSignal }) => Promise<string> }, signal?: AbortSignal) =>
  stt.transcribe(new Int16Array(0), { language: 'en', signal });

/** Whether `promise` settled within a few turns of the event loop (no wall timing). */
async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

// A wait that never ends fails its test rather than the whole file.
describe('a turn of streaming recognition', { timeout: 20_000 }, () => {
  it('waits for an utterance still being heard and for its final', async () => {
    const { port, emit } = session();
    const recognition = createStreamingRecognizer(port, { timeoutMs: 60_000, graceMs: 60_000 });
    emit({ type: 'speech_started', audioMs: 0 });
    emit({ type: 'final', itemId: 'a', text: ' I would like ' });
    emit({ type: 'speech_started', audioMs: 1000 });
    const turn = transcribe(recognition.stt);
    assert.equal(await settledSoon(turn), false, 'speech started, not stopped');
    emit({ type: 'speech_stopped', audioMs: 900 });
    emit({ type: 'speech_stopped', audioMs: 1500 });
    assert.equal(await settledSoon(turn), false, 'two utterances ended, one final');
    emit({ type: 'final', itemId: 'b', text: '' });
    assert.equal(await turn, 'I would like', 'an empty final adds no word');
  });

  it('with nothing transcribed yet, waits its grace for the words, then answers what it has', async () => {
    const { port, emit } = session();
    const recognition = createStreamingRecognizer(port, { timeoutMs: 60_000, graceMs: 50 });
    const empty = transcribe(recognition.stt);
    assert.equal(await settledSoon(empty), false, 'within the grace');
    assert.equal(await empty, '');
    const late = transcribe(recognition.stt);
    emit({ type: 'speech_started', audioMs: 0 });
    emit({ type: 'speech_stopped', audioMs: 400 });
    emit({ type: 'final', itemId: 'a', text: 'late words' });
    assert.equal(await late, 'late words', 'a final within the grace answers at once');
  });

  it('answers at once with words already final; a turn waiting when the session closes, at once, and every turn after it', async () => {
    const { port, emit } = session();
    const recognition = createStreamingRecognizer(port, { timeoutMs: 60_000, graceMs: 60_000 });
    emit({ type: 'final', itemId: 'a', text: 'ready' });
    emit({ type: 'final', itemId: 'b', text: '' });
    emit({ type: 'final', itemId: 'c', text: ' now ' });
    assert.equal(await transcribe(recognition.stt), 'ready  now', 'the finals with words joined by a space, trimmed');
    emit({ type: 'speech_started', audioMs: 0 });
    const turn = transcribe(recognition.stt);
    assert.equal(await settledSoon(turn), false);
    emit({ type: 'closed', reason: 'gone' });
    assert.equal(await settledSoon(turn), true, 'closed mid-turn: no grace waited out');
    assert.equal(await turn, '');
    const after = transcribe(recognition.stt);
    assert.equal(await settledSoon(after), true, 'closed before the turn: no grace');
    assert.equal(await after, '');
  });

  it('fails after its timeout; an abort rejects at once', async () => {
    const { port, emit } = session();
    const recognition = createStreamingRecognizer(port, { timeoutMs: 30, graceMs: 60_000 });
    emit({ type: 'speech_started', audioMs: 0 });
    await assert.rejects(transcribe(recognition.stt), { message: 'no final transcript within 30 ms' });
    const patient = createStreamingRecognizer(session().port, { timeoutMs: 60_000, graceMs: 60_000 });
    const controller = new AbortController();
    const turn = transcribe(patient.stt, controller.signal);
    controller.abort();
    await assert.rejects(turn, { message: 'aborted' });
  });

  it('a turn answered leaves no abort listener on its signal', async () => {
    const { port, emit } = session();
    const recognition = createStreamingRecognizer(port, { timeoutMs: 60_000, graceMs: 60_000 });
    emit({ type: 'speech_started', audioMs: 0 });
    const controller = new AbortController();
    const turn = transcribe(recognition.stt, controller.signal);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    emit({ type: 'speech_stopped', audioMs: 100 });
    emit({ type: 'final', itemId: 'a', text: 'done' });
    assert.equal(await turn, 'done');
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });
});

describe('the streaming recogniser', () => {
  it('tells errors and interim results, tees each caller frame, and closes its session', async () => {
    const { port, emit, sent, closes } = session();
    const errors: string[] = [];
    const recognition = createStreamingRecognizer(port, { timeoutMs: 1000, onError: (message) => errors.push(message) });
    emit({ type: 'interim', itemId: 'a', text: 'unheard' });
    const interims: string[] = [];
    recognition.onInterim((text) => interims.push(text));
    emit({ type: 'interim', itemId: 'a', text: 'hello th' });
    emit({ type: 'error', code: 'x', message: 'rate limited' });
    assert.deepEqual([interims, errors], [['hello th'], ['rate limited']]);
    createStreamingRecognizer(session().port, { timeoutMs: 1000 });
    const quiet = session();
    createStreamingRecognizer(quiet.port, { timeoutMs: 1000 });
    assert.doesNotThrow(() => quiet.emit({ type: 'error', code: null, message: 'no one listens' }));
    const { stream, far } = createMediaPair();
    const heard: number[] = [];
    recognition.tee(stream).onFrame((frame) => heard.push(frame.length));
    far.sendFrame(new Int16Array(320));
    far.sendFrame(new Int16Array(320));
    assert.deepEqual([sent, heard], [
      [320, 320],
      [320, 320],
    ]);
    recognition.close();
    assert.equal(closes(), 1);
  });
});
