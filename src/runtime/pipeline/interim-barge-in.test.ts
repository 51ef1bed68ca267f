import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { callerAudio, waitFor } from '../../../test/fakes/openai-realtime/caller.ts';
import { startFakeRealtimeServer } from '../../../test/fakes/openai-realtime/server.ts';
import { bistroAgent, builtinEngine } from '../../../test/support/bistro-agent.ts';
import { createOpenAiRealtimeStt } from '../../providers/realtime/openai-realtime-stt.ts';
import { createMediaPair } from '../../providers/telephony/media-pair.ts';
import { createTtsRegistry } from '../../providers/tts/index.ts';
import { createRuntimeSpeech } from '../../providers/tts/runtime-speech.ts';
import type { CallMedia } from '../../ports/telephony.ts';
import { createCallSession } from '../call-session.ts';
import { createScaledClock } from '../clock.ts';
import type { TranscriptEntry } from '../outcome.ts';
import { createStreamingRecognizer } from '../streaming-recognizer.ts';

// A cascade call with streaming recognition (STT_STREAMING=realtime) against the fake Realtime
// server: the recogniser's interim results are caller speech too. Words it hears while the agent
// talks cut the agent, though the call's VAD alone would not (barge_in_min_ms is out of reach here).

const fake = await startFakeRealtimeServer({ apiKey: 'sk-interim' });
const stt = createOpenAiRealtimeStt({ baseUrl: fake.url, apiKey: 'sk-interim', model: 'gpt-4o-transcribe', connectTimeoutMs: 5000 });
const speech = createRuntimeSpeech(createTtsRegistry());
after(() => fake.close());
afterEach(() => fake.reset());
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const GREETING = 'Hello and welcome to the bistro, where we serve fresh pasta and grilled fish every single day of the week, from noon until late in the evening.';

describe('interim results feed barge-in', () => {
  it("the recogniser's words over the agent cut it; the caller's turn is then heard and answered", async () => {
    const session = await stt.open({ language: 'en-US', turnEndSilenceMs: 250 });
    const recognizer = createStreamingRecognizer(session, { timeoutMs: 5000 });
    const clock = createScaledClock(1);
    const { stream, far } = createMediaPair();
    const seen = { clears: 0, agentFrames: 0 };
    far.onClear(() => seen.clears++);
    far.onAgentFrame(() => seen.agentFrames++);
    const media: CallMedia = { stream: recognizer.tee(stream), answeredBy: 'human', transfer: async () => stream.close(), hangup: async () => stream.close() };
    const transcript: TranscriptEntry[] = [];
    const call = createCallSession({
      clock,
      media,
      stt: recognizer.stt,
      tts: speech,
      engine: builtinEngine(),
      // Only the recogniser can cut the agent: the VAD would need 60 s of speech, the turn ends after 1.5 s of silence.
      agent: bistroAgent({ first_message: GREETING, barge_in_min_ms: 60_000, turn_end_silence_ms: 1500 }),
      workspaceId: 'ws_test',
      variables: {},
      isSpeech: (frame) => frame.some((sample) => sample !== 0),
      interims: recognizer,
      observer: { transcript: (entry) => transcript.push(entry), transfer: () => undefined, error: () => undefined },
    });
    const outcome = call.run();
    await waitFor(() => seen.agentFrames >= 10);
    fake.hear('Stop, I want a table');
    for (const frame of callerAudio([{ speechMs: 400 }, { silenceMs: 2000 }])) {
      far.sendFrame(frame);
      await sleep(20);
    }
    await waitFor(() => transcript.some((e) => e.role === 'user'));
    const cut = transcript[0];
    assert.equal(cut.role, 'agent');
    assert.equal(cut.interrupted, true, JSON.stringify(transcript));
    assert.ok(GREETING.startsWith(cut.text) && cut.text.length < GREETING.length, cut.text);
    assert.equal(seen.clears, 1);
    assert.deepEqual(transcript.filter((e) => e.role === 'user').map((e) => e.text), ['Stop, I want a table']);
    await waitFor(() => transcript.filter((e) => e.role === 'agent').length === 2);
    call.end('api_hangup');
    await outcome;
    recognizer.close();
  });
});
