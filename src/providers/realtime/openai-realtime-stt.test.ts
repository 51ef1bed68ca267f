import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { callerAudio, collect, waitFor } from '../../../test/fakes/openai-realtime/caller.ts';
import { startFakeRealtimeServer } from '../../../test/fakes/openai-realtime/server.ts';
import type { StreamingRecognitionEvent } from '../../ports/speech-model.ts';
import { createOpenAiRealtimeStt } from './openai-realtime-stt.ts';

// Streaming recognition against the fake Realtime server: one transcription session per call,
// turns cut by the server's VAD on the audio's own clock, interim results then the final one.

const fake = await startFakeRealtimeServer({ apiKey: 'sk-stt' });
const stt = createOpenAiRealtimeStt({ baseUrl: fake.url, apiKey: 'sk-stt', model: 'gpt-4o-mini-transcribe', connectTimeoutMs: 5000 });
after(() => fake.close());
afterEach(() => fake.reset());

describe('OpenAI Realtime streaming recognition', () => {
  it('opens a transcription session: intent, model, language, 24 kHz PCM, server VAD at the agent silence', async () => {
    const session = await stt.open({ language: 'fr-FR', turnEndSilenceMs: 700 });
    const connection = fake.connections.at(-1);
    assert.equal(connection?.path, '/v1/realtime?intent=transcription');
    assert.equal(connection?.authorization, 'Bearer sk-stt');
    const input = connection?.session().audio.input;
    assert.deepEqual([input.format, input.transcription, input.turn_detection.type, input.turn_detection.silence_duration_ms], [{ type: 'audio/pcm', rate: 24000 }, { model: 'gpt-4o-mini-transcribe', language: 'fr' }, 'server_vad', 700]);
    session.close();
  });

  it('two utterances: each starts and stops on the audio clock, grows in interim results, ends in its final text', async () => {
    const session = await stt.open({ language: 'en-US', turnEndSilenceMs: 500 });
    const events = collect<StreamingRecognitionEvent>((listener) => session.onEvent(listener));
    fake.hear('Book a table for two', 'At seven');
    for (const frame of callerAudio([{ speechMs: 800 }, { silenceMs: 600 }, { speechMs: 400 }, { silenceMs: 600 }])) assert.equal(session.sendAudio(frame), true);
    await waitFor(() => events.filter((e) => e.type === 'final').length === 2);
    const stops = events.filter((e) => e.type === 'speech_stopped').map((e) => e.type === 'speech_stopped' && e.audioMs);
    const starts = events.filter((e) => e.type === 'speech_started').map((e) => e.type === 'speech_started' && e.audioMs);
    assert.deepEqual(starts.length, 2);
    assert.ok(Math.abs(Number(starts[1]) - 1400) <= 20, `second start at ${starts[1]}`);
    assert.ok(Math.abs(Number(stops[0]) - 1300) <= 20 && Math.abs(Number(stops[1]) - 2300) <= 20, `stops at ${stops}`);
    const texts = events.flatMap((e) => (e.type === 'interim' || e.type === 'final' ? [[e.type, e.text]] : []));
    const first = texts.filter(([, text]) => text.startsWith('Book'));
    assert.deepEqual(first, [
      ['interim', 'Book'],
      ['interim', 'Book a'],
      ['interim', 'Book a table'],
      ['interim', 'Book a table for'],
      ['interim', 'Book a table for two'],
      ['final', 'Book a table for two'],
    ]);
    assert.deepEqual(events.filter((e) => e.type === 'final').map((e) => e.type === 'final' && e.text), ['Book a table for two', 'At seven']);
    assert.equal(fake.connections.at(-1)?.received.some((e) => e.type === 'response.create'), false, 'a transcription session never asks for a response');
    session.close();
  });

  it('the session ending is reported once, and audio after it is not sent', async () => {
    const session = await stt.open({ language: 'en', turnEndSilenceMs: 500 });
    const events = collect<StreamingRecognitionEvent>((listener) => session.onEvent(listener));
    fake.connections.at(-1)?.disconnect();
    await waitFor(() => events.some((e) => e.type === 'closed'));
    assert.equal(session.sendAudio(new Int16Array(320)), false);
    assert.equal(events.filter((e) => e.type === 'closed').length, 1);
  });
});
