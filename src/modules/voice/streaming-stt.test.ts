import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startFakeRealtimeServer } from '../../../test/fakes/openai-realtime/server.ts';
import { buildTestApp } from '../../../test/support/app.ts';
import { spoken } from '../../../test/support/speech.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { connectMedia, sendPaced, transcriptLines } from '../../../test/support/media-client.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';

// STT_STREAMING=realtime on a cascade agent in a voice session: no batch recogniser is configured;
// one Realtime transcription session per call hears the caller's real speech as it comes (the
// fake is told the words), and the turn's transcript is ready when the call's VAD ends the turn.

const fake = await startFakeRealtimeServer({ apiKey: 'sk-stream' });
const t = await buildTestApp({ env: { STT_STREAMING: 'realtime', REALTIME_BASE_URL: fake.url, REALTIME_API_KEY: 'sk-stream' } });
after(() => fake.close());
await t.app.listen({ port: 0, host: '127.0.0.1' });
const address = t.app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;


describe('streaming recognition (STT_STREAMING=realtime)', () => {
  it('a spoken turn is transcribed as it is said: its words ready when the turn ends, answered by the agent', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { silence_timeout_seconds: 30 });
    const res = await t.request({ method: 'POST', url: '/v1/voice/sessions', ...as(user), payload: { agent_id: agent.id, external_user_id: 'user-9' } });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    const client = connectMedia(port, created.token);
    await client.opened;
    await client.until(() => transcriptLines(client.messages, 'agent').length === 1, 'the greeting');
    fake.hear('What time do you open tomorrow?');
    await sendPaced(client.socket, await spoken('What time do you open tomorrow?'), 900);
    await client.until(() => transcriptLines(client.messages, 'agent').length === 2, 'the answer');
    assert.deepEqual(transcriptLines(client.messages, 'user'), ['What time do you open tomorrow?']);
    const session = fake.connections.at(-1);
    assert.equal(session?.path, '/v1/realtime?intent=transcription');
    assert.equal(session?.session().audio.input.turn_detection.silence_duration_ms, 250, 'half the agent turn-ending silence');
    assert.ok((session?.audioMs() ?? 0) > 1000, 'the caller audio was streamed to the recogniser');
    await t.request({ method: 'POST', url: `/v1/voice/sessions/${created.id}/end`, ...as(user) });
    await client.closed;
    const call = (await t.request({ method: 'GET', url: `/v1/calls/${created.call_id}`, ...as(user) })).json();
    const answer = call.transcript.find((e: { role: string; timings?: unknown }) => e.role === 'agent' && e.timings);
    assert.ok(answer, JSON.stringify(call.transcript));
    assert.ok(answer.timings.stt_wait_ms <= 100, `the turn waited ${answer.timings.stt_wait_ms} ms for its words`);
    assert.equal(session?.closed, true, 'the recognition session ends with the call');
  });
});
