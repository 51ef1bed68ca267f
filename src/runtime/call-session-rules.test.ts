import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTtsRegistry } from '../providers/tts/index.ts';
import { createRuntimeSpeech } from '../providers/tts/runtime-speech.ts';
import { FRAME_MS, FRAME_SAMPLES } from '../platform/audio/frames.ts';
import { createCallSession, STILL_THERE_PROMPT } from './call-session.ts';
import { createMediaPair } from '../providers/telephony/media-pair.ts';
import type { SessionOutcome } from './outcome.ts';
import type { CallMedia } from '../ports/telephony.ts';
import type { CallAgent } from './call-agent.ts';
import { createPassThroughStt } from '../providers/telephony/scripted-caller.ts';
import { createVirtualClock, type VirtualClock } from './virtual-clock.ts';
import { bistroAgent, builtinEngine } from '../../test/support/bistro-agent.ts';

// The call session's rules at their boundaries, on a virtual clock with a caller driven frame by
// frame: a frame is speech when its first sample is not zero (the classifier is the session's
// `isSpeech` dependency), so the caller speaks for an exact number of 20 ms frames.
// - barge-in: caller speech of exactly barge_in_min_ms while the agent talks interrupts it; one
//   frame less does not;
// - silence: "are you still there?" is asked silence_timeout_seconds after the agent stopped, after
//   each silence that follows the caller's speech, and only a silence right after the prompt ends
//   the call; max_duration_seconds ends it at that time.

const speech = createRuntimeSpeech(createTtsRegistry());
const engine = builtinEngine();

const agent: CallAgent = bistroAgent({ max_duration_seconds: 60, barge_in_min_ms: 240, silence_timeout_seconds: 3 });

const SPEECH = new Int16Array(FRAME_SAMPLES).fill(1000);
const SILENCE = new Int16Array(FRAME_SAMPLES);

interface Caller {
  clock: VirtualClock;
  /** Says `text` (to the recogniser) as `frames` frames of speech, from the next frame on. */
  say(text: string, frames: number): void;
  /** Agent turns played to their end (marks) so far. */
  readonly agentTurnsEnded: number;
}

/** A session with a caller that sends one frame per 20 ms: speech while some is left, silence otherwise. */
function converse(overrides: Partial<CallAgent>, script: { onAgentAudio?(caller: Caller): void; onAgentTurnEnd?(caller: Caller): void }): Promise<SessionOutcome> {
  const clock = createVirtualClock({ speed: Number.POSITIVE_INFINITY });
  const { stream, far } = createMediaPair();
  const stt = createPassThroughStt();
  let speechLeft = 0;
  let agentTurnsEnded = 0;
  let agentTalking = false;
  const caller: Caller = {
    clock,
    say(text, frames) {
      stt.push(text);
      speechLeft = frames;
    },
    get agentTurnsEnded() {
      return agentTurnsEnded;
    },
  };
  far.onAgentFrame(() => {
    if (agentTalking) return;
    agentTalking = true;
    script.onAgentAudio?.(caller);
  });
  far.onClear(() => {
    agentTalking = false;
  });
  far.onMark(() => {
    agentTalking = false;
    agentTurnsEnded++;
    script.onAgentTurnEnd?.(caller);
  });
  const tick = () => {
    if (far.closed) return;
    far.sendFrame(speechLeft > 0 ? SPEECH : SILENCE);
    if (speechLeft > 0) speechLeft--;
    clock.setTimer(tick, FRAME_MS);
  };
  const media: CallMedia = {
    stream,
    stt,
    answeredBy: 'human',
    transfer: async () => stream.close(),
    hangup: async () => stream.close(),
  };
  const session = createCallSession({
    clock,
    media,
    stt,
    tts: speech,
    engine,
    agent: { ...agent, ...overrides },
    workspaceId: 'ws_test',
    variables: {},
    isSpeech: (frame) => frame[0] !== 0,
    observer: { transcript: () => undefined, transfer: () => undefined, error: () => undefined },
  });
  const outcome = session.run();
  tick();
  return outcome;
}

/** The caller speaks `frames` frames, 400 ms into the greeting; the call ends at max_duration. */
async function speakOverGreeting(frames: number) {
  return converse(
    { max_duration_seconds: 12, silence_timeout_seconds: 60 },
    {
      onAgentAudio: (caller) => {
        if (caller.agentTurnsEnded === 0) caller.clock.setTimer(() => caller.say('Sorry, one question.', frames), 400);
      },
    },
  );
}

describe('call session rules at their boundaries', () => {
  it(`barge-in: exactly barge_in_min_ms (${agent.barge_in_min_ms} ms, a whole number of frames) of speech interrupts the agent`, async () => {
    const outcome = await speakOverGreeting(agent.barge_in_min_ms / FRAME_MS);
    const greeting = outcome.transcript[0];
    assert.equal(greeting.interrupted, true, `the greeting was cut: ${JSON.stringify(outcome.transcript)}`);
    assert.ok((agent.first_message as string).startsWith(greeting.text) && greeting.text !== agent.first_message);
    assert.deepEqual(outcome.transcript[1], { ...outcome.transcript[1], role: 'user', text: 'Sorry, one question.' });
  });

  it('barge-in: one frame less is not a barge-in (a cough): the greeting plays whole and is no turn', async () => {
    const outcome = await speakOverGreeting(agent.barge_in_min_ms / FRAME_MS - 1);
    assert.equal(outcome.transcript[0].text, agent.first_message);
    assert.equal(outcome.transcript[0].interrupted, undefined);
    assert.equal(outcome.transcript.filter((e) => e.role === 'user').length, 0);
    assert.equal(outcome.endReason, 'max_duration');
  });

  it('max duration: the call ends at max_duration_seconds exactly, not later', async () => {
    const outcome = await converse({ max_duration_seconds: 3, silence_timeout_seconds: 60 }, {});
    assert.equal(outcome.endReason, 'max_duration');
    assert.equal(outcome.durationMs, 3000);
  });

  it('silence: "are you still there?" comes silence_timeout_seconds after the agent stopped, to the frame', async () => {
    const outcome = await converse({ silence_timeout_seconds: 2 }, {});
    const [greeting, prompt] = outcome.transcript;
    assert.equal(prompt.text, STILL_THERE_PROMPT);
    const wait = prompt.start_ms - greeting.end_ms;
    assert.ok(wait >= 2000 && wait <= 2000 + FRAME_MS, `asked ${wait} ms after the greeting`);
    assert.equal(outcome.endReason, 'silence_timeout');
    const end = outcome.durationMs - prompt.end_ms;
    assert.ok(end >= 2000 && end <= 2000 + FRAME_MS, `ended ${end} ms after the prompt`);
  });

  it('silence: the caller answering "are you still there?" re-arms the question; a later silence asks again before ending', async () => {
    const outcome = await converse(
      {},
      {
        onAgentTurnEnd: (caller) => {
          // Turns: 1 greeting, 2 the prompt, 3 the reply to the caller, 4 the prompt again.
          if (caller.agentTurnsEnded === 2) caller.clock.setTimer(() => caller.say('Yes, I am here. What are your opening hours?', 40), 600);
        },
      },
    );
    const texts = outcome.transcript.map((e) => `${e.role}: ${e.text}`);
    assert.equal(outcome.endReason, 'silence_timeout', texts.join('\n'));
    assert.deepEqual(
      outcome.transcript.map((e) => (e.text === STILL_THERE_PROMPT ? 'prompt' : e.role)),
      ['agent', 'prompt', 'user', 'agent', 'prompt'],
      texts.join('\n'),
    );
  });

  it('silence: a caller still speaking when the silence timeout comes is not asked "are you still there?" (an agent that may not be interrupted would say it over them)', async () => {
    let speaking = { from: Number.POSITIVE_INFINITY, to: 0 };
    const agentAudioAt: number[] = [];
    const outcome = await converse(
      { silence_timeout_seconds: 2, interruptible: false },
      {
        onAgentAudio: (caller) => void agentAudioAt.push(caller.clock.now()),
        onAgentTurnEnd: (caller) => {
          // One second into the silence, three seconds of speech: past the timeout.
          if (caller.agentTurnsEnded !== 1) return;
          speaking = { from: caller.clock.now() + 1000, to: caller.clock.now() + 4000 };
          caller.clock.setTimer(() => caller.say('I would like a table for two on Friday evening please.', 150), 1000);
        },
      },
    );
    const texts = outcome.transcript.map((e) => `${e.role}: ${e.text}`);
    assert.deepEqual(
      agentAudioAt.filter((at) => at >= speaking.from && at <= speaking.to),
      [],
      `the agent said nothing while the caller spoke\n${texts.join('\n')}`,
    );
    assert.deepEqual(
      outcome.transcript.slice(0, 3).map((e) => (e.text === STILL_THERE_PROMPT ? 'prompt' : e.role)),
      ['agent', 'user', 'agent'],
      texts.join('\n'),
    );
  });
});
