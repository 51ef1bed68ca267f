import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sayExactly, speechSamples } from '../../../test/fakes/openai-realtime/caller.ts';
import { startFakeRealtimeServer } from '../../../test/fakes/openai-realtime/server.ts';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { connectMedia, sendPaced, transcriptLines } from '../../../test/support/media-client.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';

// A speech-to-speech agent in a browser voice session: the media WebSocket's caller audio goes to
// the model (the fake Realtime server, which is told what it "hears"), the model's speech comes
// back as frames, a barge-in sends `clear`, and the session ends and bills as any other.

const fake = await startFakeRealtimeServer({ apiKey: 'sk-voice', timing: { msPerWord: 60 } });
const t = await buildTestApp({ env: { REALTIME_BASE_URL: fake.url, REALTIME_API_KEY: 'sk-voice' } });
after(() => fake.close());
await t.app.listen({ port: 0, host: '127.0.0.1' });
const address = t.app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;


describe('a speech-to-speech agent in a voice session (media WebSocket)', () => {
  it('greets, answers speech and typed text, is cut off by the caller, ends through the API and bills', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { llm: { provider: 'openai-realtime' }, voice: 'coral', barge_in_min_ms: 100, silence_timeout_seconds: 30 });
    fake.reply(sayExactly, { text: 'We open at nine.' }, ({ items }) => ({ text: `You typed ${items.at(-1)?.text}` }), {
      text: 'Our menu has pasta pizza salads soups desserts and a long list of wines from every region of Italy and France',
    }, { text: 'Sure.' });
    fake.hear('When do you open?', 'Stop please');
    const res = await t.request({ method: 'POST', url: '/v1/voice/sessions', ...as(user), payload: { agent_id: agent.id, external_user_id: 'user-7' } });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    const client = connectMedia(port, created.token);
    await client.opened;
    await client.until(() => transcriptLines(client.messages, 'agent').length === 1 && client.audio() > 0, 'the greeting');
    assert.deepEqual(transcriptLines(client.messages, 'agent'), ['Hello, this is Ada from the bistro. How can I help?']);
    await sendPaced(client.socket, speechSamples(400), 700);
    await client.until(() => transcriptLines(client.messages, 'agent').length === 2, 'the answer to speech');
    assert.deepEqual(transcriptLines(client.messages, 'user'), ['When do you open?']);
    assert.equal(transcriptLines(client.messages, 'agent')[1], 'We open at nine.');
    client.socket.send(JSON.stringify({ type: 'text', text: 'menu please' }));
    await client.until(() => transcriptLines(client.messages, 'agent').length === 3, 'the answer to typed text');
    assert.equal(transcriptLines(client.messages, 'agent')[2], 'You typed menu please');
    // A long answer, cut by the caller's speech: the browser is told to drop what it buffered.
    client.socket.send(JSON.stringify({ type: 'text', text: 'tell me everything' }));
    const before = client.audio();
    await client.until(() => client.audio() > before + 6400, 'the long answer playing');
    await sendPaced(client.socket, speechSamples(300), 700);
    await client.until(() => client.messages.some((m) => m.type === 'clear'), 'clear on barge-in');
    const ended = await t.request({ method: 'POST', url: `/v1/voice/sessions/${created.id}/end`, ...as(user) });
    assert.equal(ended.statusCode, 200, ended.body);
    assert.equal(await client.closed, 1000);
    const final = (await t.request({ method: 'GET', url: `/v1/voice/sessions/${created.id}`, ...as(user) })).json();
    assert.equal(final.cost_usd, Math.round((Math.ceil(final.duration_sec) * 0.05 * 1e6) / 60) / 1e6);
    const transcript = (await t.request({ method: 'GET', url: `/v1/voice/sessions/${created.id}/transcript`, ...as(user) })).json().transcript;
    assert.ok(transcript.some((e: { role: string; interrupted?: boolean; text: string }) => e.role === 'agent' && e.interrupted && e.text.startsWith('Our menu')), JSON.stringify(transcript));
    assert.equal(fake.connections.at(-1)?.session().audio.output.voice, 'coral');
    assert.ok(fake.connections.at(-1)?.received.some((e) => e.type === 'conversation.item.truncate'), 'the model is told what was heard');
  });

  it('stays PCM on the media WebSocket (no mu-law there): the model is asked for 24 kHz PCM both ways, the browser gets PCM16 frames', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { llm: { provider: 'openai-realtime' } });
    fake.reset();
    fake.reply(sayExactly);
    const opened = fake.connections.length;
    const res = await t.request({ method: 'POST', url: '/v1/voice/sessions', ...as(user), payload: { agent_id: agent.id, external_user_id: 'user-8' } });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    const client = connectMedia(port, created.token);
    await client.opened;
    await client.until(() => transcriptLines(client.messages, 'agent').length === 1 && client.audio() > 0, 'the greeting');
    const update = fake.connections[opened]?.received[0];
    const audio = update?.type === 'session.update' && update.session.type === 'realtime' ? update.session.audio : undefined;
    assert.deepEqual([audio?.input?.format, audio?.output?.format], [{ type: 'audio/pcm', rate: 24000 }, { type: 'audio/pcm', rate: 24000 }]);
    assert.equal((await t.request({ method: 'POST', url: `/v1/voice/sessions/${created.id}/end`, ...as(user) })).statusCode, 200);
    assert.equal(await client.closed, 1000);
  });
});
