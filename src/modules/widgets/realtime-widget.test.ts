import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sayExactly, speechSamples } from '../../../test/fakes/openai-realtime/caller.ts';
import { startFakeRealtimeServer } from '../../../test/fakes/openai-realtime/server.ts';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { connectMedia, sendPaced, transcriptLines } from '../../../test/support/media-client.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';
import { createWidget } from './test-helpers.ts';

// A voice widget whose agent thinks in speech (llm.provider openai-realtime, issue 31): the
// visitor's session, opened through the widget's public route as embed.js opens it, runs on the
// model (the fake Realtime server) over the built-in media WebSocket: greeting, an answer to the
// visitor's speech, and a session the workspace sees with its transcript once the visitor leaves.

const fake = await startFakeRealtimeServer({ apiKey: 'sk-widget', timing: { msPerWord: 60 } });
const t = await buildTestApp({ env: { REALTIME_BASE_URL: fake.url, REALTIME_API_KEY: 'sk-widget' } });
after(() => fake.close());
await t.app.listen({ port: 0, host: '127.0.0.1' });
const address = t.app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;


describe('a voice widget with a speech-to-speech agent', () => {
  it("greets the visitor, answers what they say, and the workspace sees the session's transcript after they leave", async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { llm: { provider: 'openai-realtime' }, voice: 'verse', silence_timeout_seconds: 30 });
    const widget = await createWidget(t, user, { agent_id: agent.id, mode: 'voice' });
    fake.reply(sayExactly, { text: 'We are on Elm Street.' });
    fake.hear('Where are you?');

    const res = await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/voice`, payload: { visitor_id: 'visitor-1' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().transport, 'builtin');
    const client = connectMedia(port, res.json().token);
    await client.opened;
    await client.until(() => transcriptLines(client.messages, 'agent').length === 1 && client.audio() > 0, 'the greeting');
    await sendPaced(client.socket, speechSamples(400), 700);
    await client.until(() => transcriptLines(client.messages, 'agent').length === 2, 'the answer');
    assert.deepEqual(transcriptLines(client.messages, 'user'), ['Where are you?']);
    assert.equal(transcriptLines(client.messages, 'agent')[1], 'We are on Elm Street.');
    assert.equal(fake.connections.at(-1)?.session().audio.output.voice, 'verse', "the agent's voice is the model's");

    client.socket.close(1000);
    const sessions = async () => (await t.request({ method: 'GET', url: '/v1/voice/sessions', ...as(user) })).json().data as Array<{ id: string; status: string }>;
    const deadline = Date.now() + 60_000;
    while ((await sessions()).some((s) => s.status === 'active') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const [session] = await sessions();
    assert.notEqual(session.status, 'active', 'the session ended with the socket');
    const transcript = (await t.request({ method: 'GET', url: `/v1/voice/sessions/${session.id}/transcript`, ...as(user) })).json().transcript as Array<{ role: string; text: string }>;
    assert.deepEqual(
      transcript.map((e) => [e.role, e.text]),
      [
        ['agent', 'Hello, this is Ada from the bistro. How can I help?'],
        ['user', 'Where are you?'],
        ['agent', 'We are on Elm Street.'],
      ],
    );
  });
});
