import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { callerAudio, waitFor } from '../../../test/fakes/openai-realtime/caller.ts';
import { type ResponderContext, startFakeRealtimeServer } from '../../../test/fakes/openai-realtime/server.ts';
import { bistroAgent, builtinEngine } from '../../../test/support/bistro-agent.ts';
import { createOpenAiRealtime } from '../../providers/realtime/openai-realtime.ts';
import { createMediaPair } from '../../providers/telephony/media-pair.ts';
import type { CallMedia } from '../../ports/telephony.ts';
import { createScaledClock } from '../clock.ts';
import type { TranscriptEntry } from '../outcome.ts';
import { createSpeechModelCall } from '../speech-model-call.ts';

// The speech-to-speech stages on the call shell, against the fake Realtime server: the caller's
// transcript keeps the end of their speech however late the transcription comes, and the shell's
// hang-up rule (no hang-up when the transport itself closed).

const fake = await startFakeRealtimeServer({ apiKey: 'sk-stages', timing: { msPerWord: 40 } });
const model = createOpenAiRealtime({ baseUrl: fake.url, apiKey: 'sk-stages', model: 'gpt-realtime', transcriptionModel: 'gpt-4o-transcribe', connectTimeoutMs: 5000 });
after(() => fake.close());
afterEach(() => {
  fake.reset();
  fake.set({ transcriptionDelayMs: 0 });
});

const sayExactly = ({ instructions }: ResponderContext) => ({ text: /"(.*)"$/.exec(instructions ?? '')?.[1] ?? '' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function startCall() {
  const clock = createScaledClock(1);
  const { stream, far } = createMediaPair();
  const seen = { hangups: 0 };
  const media: CallMedia = {
    stream,
    answeredBy: 'human',
    transfer: async () => stream.close(),
    hangup: async () => {
      seen.hangups++;
      stream.close();
    },
  };
  const transcript: TranscriptEntry[] = [];
  const observer = { transcript: (entry: TranscriptEntry) => transcript.push(entry), transfer: () => undefined, error: () => undefined };
  const call = createSpeechModelCall({ clock, media, model, engine: builtinEngine(), agent: bistroAgent({ barge_in_min_ms: 100 }), workspaceId: 'ws_test', variables: {}, observer, today: new Date('2026-11-28T12:00:00Z') });
  const outcome = call.run();
  const speak = async (speechMs: number) => {
    for (const frame of callerAudio([{ speechMs }])) {
      far.sendFrame(frame);
      await sleep(20);
    }
    for (const frame of callerAudio([{ silenceMs: 600 }])) far.sendFrame(frame);
  };
  const said = (role: 'agent' | 'user') => transcript.filter((e) => e.role === role);
  return { call, outcome, seen, speak, said, far };
}

describe('speech-to-speech stages on the call shell', () => {
  it("the caller's entry ends when their speech ended, though its transcription came after the reply started", async () => {
    fake.reply(sayExactly, { text: 'We open at nine.' });
    fake.hear('What time do you open?');
    const c = startCall();
    await waitFor(() => c.said('agent').length === 1);
    fake.set({ transcriptionDelayMs: 1500 });
    await c.speak(300);
    await waitFor(() => c.said('user').length === 1 && c.said('agent').length === 2);
    const [question] = c.said('user');
    const answer = c.said('agent')[1];
    assert.equal(question.text, 'What time do you open?');
    assert.ok(question.end_ms <= answer.start_ms, `the question ends at ${question.end_ms} ms, its answer starts at ${answer.start_ms} ms`);
    assert.ok(question.start_ms < question.end_ms);
    c.call.end('api_hangup');
    await c.outcome;
  });

  it('hangs up when it ends the call itself, not when the transport closed', async () => {
    fake.reply(sayExactly);
    const c = startCall();
    await waitFor(() => c.said('agent').length === 1);
    c.call.end('api_hangup');
    assert.equal((await c.outcome).endReason, 'api_hangup');
    assert.equal(c.seen.hangups, 1);
    fake.reply(sayExactly);
    const d = startCall();
    await waitFor(() => d.said('agent').length === 1);
    d.far.fail('the socket broke');
    const failed = await d.outcome;
    assert.deepEqual([failed.status, failed.endReason, d.seen.hangups], ['failed', 'media_error', 0]);
  });
});
