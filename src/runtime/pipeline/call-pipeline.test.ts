import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bistroAgent, builtinEngine } from '../../../test/support/bistro-agent.ts';
import { createMediaPair } from '../../providers/telephony/media-pair.ts';
import { createPassThroughStt } from '../../providers/telephony/scripted-caller.ts';
import { createTtsRegistry } from '../../providers/tts/index.ts';
import { createRuntimeSpeech } from '../../providers/tts/runtime-speech.ts';
import type { MediaStream } from '../../ports/media.ts';
import type { CallMedia } from '../../ports/telephony.ts';
import { createCallSession } from '../call-session.ts';
import type { CallAgent } from '../call-agent.ts';
import { createVirtualClock } from '../virtual-clock.ts';

// The call shell's hang-up rule, on a cascade call (the speech-to-speech one: model-stages.test.ts):
// the call hangs up whenever it ends the call itself — a rule, the API, a transport too slow for
// the agent's audio — and never when the far end closed the media (hang-up, transport failure) or
// the call was transferred.

const speech = createRuntimeSpeech(createTtsRegistry());

function cascade(overrides: Partial<CallAgent>, transport: (stream: MediaStream) => MediaStream = (stream) => stream) {
  const clock = createVirtualClock({ speed: Number.POSITIVE_INFINITY });
  const { stream, far } = createMediaPair();
  const seen = { hangups: [] as string[], errors: [] as string[] };
  const media: CallMedia = {
    stream: transport(stream),
    answeredBy: 'human',
    transfer: async () => stream.close(),
    hangup: async (reason) => {
      seen.hangups.push(String(reason));
      stream.close();
    },
  };
  const session = createCallSession({
    clock,
    media,
    stt: createPassThroughStt(),
    tts: speech,
    engine: builtinEngine(),
    agent: bistroAgent(overrides),
    workspaceId: 'ws_test',
    variables: {},
    isSpeech: (frame) => frame[0] !== 0,
    observer: { transcript: () => undefined, transfer: () => undefined, error: (code) => seen.errors.push(code) },
  });
  return { session, outcome: session.run(), seen, far };
}

describe('the call shell: when it hangs up', () => {
  it('a transport too slow for the agent audio fails the call with media_error, and the call is hung up', async () => {
    const c = cascade({}, (stream) => ({ ...stream, send: () => false }));
    const outcome = await c.outcome;
    assert.deepEqual([outcome.status, outcome.endReason, outcome.error?.message], ['failed', 'media_error', 'the transport could not keep up with the audio']);
    assert.deepEqual(c.seen.hangups, ['media_error'], 'the caller is not left on a line nobody speaks on');
  });

  it('a rule that ends the call hangs up; a transport that failed or a caller who hung up is not hung up again', async () => {
    const limited = cascade({ max_duration_seconds: 1 });
    assert.equal((await limited.outcome).endReason, 'max_duration');
    assert.deepEqual(limited.seen.hangups, ['max_duration']);
    const broken = cascade({});
    broken.far.fail('the socket broke');
    const failed = await broken.outcome;
    assert.deepEqual([failed.status, failed.endReason, broken.seen.hangups], ['failed', 'media_error', []]);
    assert.deepEqual(broken.seen.errors, ['media_error']);
    const left = cascade({});
    left.far.hangUp();
    assert.deepEqual([(await left.outcome).endReason, left.seen.hangups], ['customer_hangup', []]);
  });
});
