import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { callerAudio, waitFor } from '../../test/fakes/openai-realtime/caller.ts';
import { startFakeRealtimeServer } from '../../test/fakes/openai-realtime/server.ts';
import { createOpenAiRealtimeStt } from '../providers/realtime/openai-realtime-stt.ts';
import { createMediaPair } from '../providers/telephony/media-pair.ts';
import { createStreamingRecognizer } from './streaming-recognizer.ts';

// Streaming recognition for a cascade call: the caller's frames teed to a Realtime transcription
// session (the fake, told what it "hears"); a turn's transcript is the finals since the last turn.

const fake = await startFakeRealtimeServer({ apiKey: 'sk-stream' });
const stt = createOpenAiRealtimeStt({ baseUrl: fake.url, apiKey: 'sk-stream', model: 'gpt-4o-transcribe', connectTimeoutMs: 5000 });
after(() => fake.close());
afterEach(() => {
  fake.reset();
  fake.set({ transcriptionDelayMs: 0 });
});

async function recognizer(timeoutMs = 5000) {
  const session = await stt.open({ language: 'en-US', turnEndSilenceMs: 250 });
  const recognition = createStreamingRecognizer(session, { timeoutMs });
  const { stream, far } = createMediaPair();
  const heard: number[] = [];
  recognition.tee(stream).onFrame((frame) => heard.push(frame.length));
  const speak = (parts: Parameters<typeof callerAudio>[0]) => {
    for (const frame of callerAudio(parts)) far.sendFrame(frame);
  };
  return { recognition, speak, heard };
}

describe('streaming recognition of a cascade call', () => {
  it('tees every caller frame to the session and still hands it to the call; a turn is the finals heard since the last', async () => {
    const { recognition, speak, heard } = await recognizer();
    fake.hear('I would like', 'a table for two', 'at seven');
    speak([{ speechMs: 400 }, { silenceMs: 300 }, { speechMs: 400 }, { silenceMs: 300 }]);
    assert.equal(heard.length, 70, 'the call gets every frame');
    await waitFor(() => fake.connections.at(-1)?.sent.filter((e) => e.type === 'conversation.item.input_audio_transcription.completed').length === 2);
    assert.equal(await recognition.stt.transcribe(new Int16Array(0), { language: 'en' }), 'I would like a table for two');
    speak([{ speechMs: 300 }, { silenceMs: 300 }]);
    assert.equal(await recognition.stt.transcribe(new Int16Array(0), { language: 'en' }), 'at seven');
    assert.equal(await recognition.stt.transcribe(new Int16Array(0), { language: 'en' }), '', 'nothing heard since');
    recognition.close();
  });

  it('a turn whose last words the recogniser is still finishing waits for their final', async () => {
    const { recognition, speak } = await recognizer();
    fake.set({ transcriptionDelayMs: 300 });
    fake.hear('Is the terrace open?');
    speak([{ speechMs: 400 }, { silenceMs: 300 }]);
    await waitFor(() => fake.connections.at(-1)?.sent.some((e) => e.type === 'input_audio_buffer.committed'));
    const started = performance.now();
    assert.equal(await recognition.stt.transcribe(new Int16Array(0), { language: 'en' }), 'Is the terrace open?');
    assert.ok(performance.now() - started >= 150, 'it waited for the final');
    recognition.close();
  });

  it('a final that never comes fails the turn after the timeout; an abort stops the wait', async () => {
    const { recognition, speak } = await recognizer(300);
    fake.set({ transcriptionDelayMs: 60_000 });
    fake.hear('lost');
    speak([{ speechMs: 400 }, { silenceMs: 300 }]);
    await waitFor(() => fake.connections.at(-1)?.sent.some((e) => e.type === 'input_audio_buffer.committed'));
    await assert.rejects(recognition.stt.transcribe(new Int16Array(0), { language: 'en' }), /no final transcript within 300 ms/);
    await assert.rejects(recognition.stt.transcribe(new Int16Array(0), { language: 'en', signal: AbortSignal.timeout(20) }), /aborted/);
    recognition.close();
  });
});
