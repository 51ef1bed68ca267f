import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createDialogueEngine } from '../engine/index.ts';
import { createBuiltinLlm } from '../providers/llm/builtin.ts';
import { createTtsRegistry } from '../providers/tts/index.ts';
import { createRuntimeSpeech } from '../providers/tts/runtime-speech.ts';
import { FRAME_MS, FRAME_SAMPLES } from '../platform/audio/frames.ts';
import { createVoiceActivityDetector } from './audio/vad.ts';
import { createCallSession } from './call-session.ts';
import { createVirtualClock } from './virtual-clock.ts';
import { createEarlyTranscriber } from './early-transcript.ts';
import { createMediaPair } from '../providers/telephony/media-pair.ts';
import type { SpeechToText } from '../ports/stt.ts';
import type { CallAgent } from './call-agent.ts';
import { createPassThroughStt, createScriptedCaller } from '../providers/telephony/scripted-caller.ts';
import { createTurnDetector, type Utterance } from './turn-detector.ts';

// Early transcription: the turn detector reports a pause (shorter than the silence that ends a
// turn) with the words so far, and a resumption; the transcriber sends the words at the pause and
// answers the turn with that request when nothing was said after it.

/** A frame the test's classifier calls speech (first sample non-zero) or silence; its samples say which frame it was. */
const frame = (speech: boolean, index: number) => Int16Array.from({ length: FRAME_SAMPLES }, (_, i) => (i === 0 ? (speech ? 1 : 0) : index));

function detectorWithPause(pauseMs: number) {
  const events: string[] = [];
  const paused: Int16Array[] = [];
  const utterances: Utterance[] = [];
  const detector = createTurnDetector({
    isSpeech: (f) => f[0] !== 0,
    turnEndSilenceMs: 500,
    onSpeechStart: () => events.push('start'),
    onSpeech: () => undefined,
    onUtterance: (u) => {
      events.push(`utterance ${u.audio.length / FRAME_SAMPLES}`);
      utterances.push(u);
    },
    pause: {
      pauseMs,
      onPause: (audio) => {
        events.push(`pause ${audio.length / FRAME_SAMPLES}`);
        paused.push(audio);
      },
      onResume: () => events.push('resume'),
    },
  });
  let index = 0;
  const feed = (speech: boolean, ms: number) => {
    for (let t = 0; t < ms; t += FRAME_MS) detector.feed(frame(speech, index), index++ * FRAME_MS);
  };
  return { events, paused, utterances, feed };
}

describe('turn detector pauses', () => {
  it('reports a pause once with the words so far, a resumption when speech comes back, then the turn', () => {
    const { events, paused, utterances, feed } = detectorWithPause(240);
    feed(true, 300); // 15 frames of speech
    feed(false, 300); // a pause of 15 frames: reported at the 12th
    feed(true, 200); // speech again: 10 frames
    feed(false, 600); // the turn ends after 25 frames of silence
    assert.deepEqual(events, ['start', 'pause 27', 'resume', 'pause 52', 'utterance 65']);
    // The early audio is the utterance's beginning, frame for frame.
    assert.deepEqual(paused[1], utterances[0].audio.subarray(0, paused[1].length));
  });

  it('reports no pause after too little speech, nor when the pause is not shorter than the turn-ending silence', () => {
    const short = detectorWithPause(240);
    short.feed(true, 60); // under minSpeechMs (100)
    short.feed(false, 600);
    assert.deepEqual(short.events, ['start']);
    const long = detectorWithPause(500);
    long.feed(true, 300);
    long.feed(false, 600);
    assert.deepEqual(long.events, ['start', 'utterance 40']);
  });
});

/** A recogniser that answers each request after `answer()` is called, recording what it was sent. */
function manualStt() {
  const requests: Array<{ samples: number; signal?: AbortSignal; settle(text: string | Error): void }> = [];
  const stt: SpeechToText = {
    stateless: true,
    transcribe: (audio, options) =>
      new Promise((resolve, reject) => {
        requests.push({ samples: audio.length, signal: options.signal, settle: (text) => (text instanceof Error ? reject(text) : resolve(text)) });
      }),
  };
  return { stt, requests };
}

/** The transcriber's clock, moved by hand. */
let nowMs = 0;
const now = () => nowMs;

describe('early transcriber', () => {
  it('answers the turn with the request sent at the pause: no second request', async () => {
    const { stt, requests } = manualStt();
    const transcriber = createEarlyTranscriber({ stt, now, language: 'en-US', pauseMs: 250, turnEndSilenceMs: 500, wanted: () => true });
    nowMs = 1000;
    transcriber.begin(new Int16Array(3200));
    assert.equal(requests.length, 1);
    nowMs = 1180;
    requests[0].settle('What time do you open?');
    await new Promise((resolve) => setImmediate(resolve));
    const answer = transcriber.transcribe(new Int16Array(8000));
    nowMs = 1400;
    // stt_ms is the recogniser's own time (180 ms, during the pause), not the turn's wait.
    assert.deepEqual(await answer, { text: 'What time do you open?', sttMs: 180 });
    assert.equal(requests.length, 1);
    assert.equal(requests[0].signal?.aborted, false);
  });

  it('aborts the early request when the caller speaks again, and transcribes the whole utterance at its end', async () => {
    const { stt, requests } = manualStt();
    const transcriber = createEarlyTranscriber({ stt, now, language: 'en-US', pauseMs: 250, turnEndSilenceMs: 500, wanted: () => true });
    transcriber.begin(new Int16Array(3200));
    transcriber.cancel();
    assert.equal(requests[0].signal?.aborted, true);
    requests[0].settle(new Error('aborted'));
    const answer = transcriber.transcribe(new Int16Array(8000));
    assert.equal(requests.length, 2);
    assert.equal(requests[1].samples, 8000);
    requests[1].settle('What time do you open tomorrow?');
    assert.equal((await answer).text, 'What time do you open tomorrow?');
    // A second pause replaces the first request.
    transcriber.begin(new Int16Array(1600));
    transcriber.begin(new Int16Array(3200));
    assert.deepEqual([requests[2].signal?.aborted, requests[3].signal?.aborted], [true, false]);
  });

  it('sends nothing early when the speech cannot be a turn, and offers no pause when off or capped by the turn', async () => {
    const { stt, requests } = manualStt();
    let wanted = false;
    const transcriber = createEarlyTranscriber({ stt, now, language: 'en-US', pauseMs: 250, turnEndSilenceMs: 500, wanted: () => wanted });
    transcriber.begin(new Int16Array(3200));
    assert.equal(requests.length, 0, 'a murmur the agent talked through');
    wanted = true;
    transcriber.begin(new Int16Array(3200));
    assert.equal(requests.length, 1);
    assert.equal(transcriber.pause?.pauseMs, 250);
    assert.equal(createEarlyTranscriber({ stt, now, language: 'en', pauseMs: 250, turnEndSilenceMs: 300, wanted: () => true }).pause?.pauseMs, 150, 'at most half the turn-ending silence');
    assert.equal(createEarlyTranscriber({ stt, now, language: 'en', pauseMs: 0, turnEndSilenceMs: 500, wanted: () => true }).pause, undefined);
    assert.equal(createEarlyTranscriber({ stt: { ...stt, stateless: false }, now, language: 'en', pauseMs: 250, turnEndSilenceMs: 500, wanted: () => true }).pause, undefined);
  });

  it("an early request's failure is the turn's (no silent retry that doubles the wait)", async () => {
    const { stt, requests } = manualStt();
    const transcriber = createEarlyTranscriber({ stt, now, language: 'en-US', pauseMs: 250, turnEndSilenceMs: 500, wanted: () => true });
    transcriber.begin(new Int16Array(3200));
    requests[0].settle(new Error('503 from the recogniser'));
    await assert.rejects(transcriber.transcribe(new Int16Array(8000)), /503/);
    assert.equal(requests.length, 1);
  });
});

const vad = await createVoiceActivityDetector({ mode: 2 });
after(() => vad.close());

describe('early transcription in a call session (sandbox caller, real VAD)', () => {
  const speech = createRuntimeSpeech(createTtsRegistry());
  const agent: CallAgent = {
    id: 'agent_early', name: 'Ada', prompt: 'You are Ada.', first_message: 'Hello, this is Ada.', language: 'en-US', transfer_number: null,
    functions: [], extraction_fields: [], end_call_phrases: [], knowledge_base_ids: [], llm: { provider: 'builtin', model: 'builtin', temperature: 0 },
    voice: 'builtin-ava', max_duration_seconds: 120, voicemail: { action: 'hangup', message: null }, turn_end_silence_ms: 500, barge_in_min_ms: 250,
    interruptible: true, silence_timeout_seconds: 5,
  };

  /** One caller line ("Goodbye!": no pause inside it) through a recogniser that notes whether each request came early. */
  async function callSaying(options: { stateless: boolean; earlyTranscriptMs?: number }) {
    const clock = createVirtualClock({ speed: Number.POSITIVE_INFINITY });
    const { stream, far } = createMediaPair();
    const said = createPassThroughStt();
    const requests: Array<{ early: boolean }> = [];
    // Sent at the pause, a request carries the signal that aborts it if the caller speaks again.
    const stt: SpeechToText = {
      stateless: options.stateless,
      transcribe: (audio, o) => {
        requests.push({ early: o.signal !== undefined });
        return said.transcribe(audio, o);
      },
    };
    const caller = createScriptedCaller({ clock, far, tts: speech, voice: 'builtin-ben', script: ['Goodbye!'] }, said);
    const session = createCallSession({
      clock,
      media: { stream, answeredBy: 'human', transfer: async () => stream.close(), hangup: async () => stream.close() },
      stt,
      tts: speech,
      engine: createDialogueEngine({ llm: createBuiltinLlm(), knowledge: { search: async () => [] }, functions: { invoke: async () => ({ status: 200, body: null, duration_ms: 0 }) } }),
      agent,
      workspaceId: 'ws_early',
      variables: {},
      isSpeech: (frame) => vad.isSpeech(frame),
      observer: { transcript: () => undefined, transfer: () => undefined, error: () => undefined },
      earlyTranscriptMs: options.earlyTranscriptMs,
    });
    caller.start();
    const outcome = await session.run();
    caller.stop();
    return { outcome, requests };
  }

  it("sends the caller's words at their pause, and the turn is answered from that one request", async () => {
    const { outcome, requests } = await callSaying({ stateless: true, earlyTranscriptMs: 250 });
    assert.equal(outcome.endReason, 'caller_goodbye');
    assert.deepEqual(outcome.transcript.filter((e) => e.role === 'user').map((e) => e.text), ['Goodbye!']);
    assert.deepEqual(requests, [{ early: true }]);
    const reply = outcome.transcript.at(-1);
    assert.equal(reply?.role, 'agent');
    assert.ok(reply?.timings && reply.timings.stt_ms >= 0);
  });

  it('waits for the end of the turn when it is off, or when the recogniser keeps an order between requests', async () => {
    for (const options of [{ stateless: true }, { stateless: false, earlyTranscriptMs: 250 }]) {
      const { outcome, requests } = await callSaying(options);
      assert.equal(outcome.endReason, 'caller_goodbye');
      assert.deepEqual(requests, [{ early: false }], JSON.stringify(options));
    }
  });
});
