import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sayExactly } from '../../../test/fakes/openai-realtime/caller.ts';
import { startFakeRealtimeServer } from '../../../test/fakes/openai-realtime/server.ts';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { decodedMs } from '../../../test/support/recordings.ts';
import { as, createCallAgent, placeCall, waitForEnd } from './test-helpers.ts';

// A speech-to-speech agent (llm.provider "openai-realtime") through the whole platform: created
// with the model's own voices, a sandbox call placed over HTTP whose scripted caller speaks real
// synthesised audio to the model (the fake Realtime server, which cannot hear: it is given the same
// lines), and the call's transcript, latency, recording, extraction and cost as for any call.

const fake = await startFakeRealtimeServer({ apiKey: 'sk-realtime', timing: { msPerWord: 40 } });
const t = await buildTestApp({ env: { REALTIME_BASE_URL: fake.url, REALTIME_API_KEY: 'sk-realtime', SANDBOX_SPEED: '50' } });
after(() => fake.close());


describe('speech-to-speech agents', () => {
  it('are created with the model voices; a builtin voice is refused; switching kinds takes the kind default voice', async () => {
    const user = await signUp(t);
    const agent = (await t.request({ method: 'POST', url: '/v1/agents', ...as(user), payload: { name: 'Rita', llm: { provider: 'openai-realtime' } } })).json();
    assert.deepEqual([agent.voice, agent.llm.provider, agent.llm.model], ['alloy', 'openai-realtime', 'gpt-realtime']);
    const refused = await t.request({ method: 'POST', url: '/v1/agents', ...as(user), payload: { name: 'Rita', voice: 'builtin-ava', llm: { provider: 'openai-realtime' } } });
    assert.equal(refused.statusCode, 422);
    assert.equal(refused.json().errors[0].path, 'voice');
    const marin = await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, ...as(user), payload: { voice: 'marin' } });
    assert.equal(marin.json().voice, 'marin', marin.body);
    const back = (await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, ...as(user), payload: { llm: { provider: 'builtin' } } })).json();
    assert.deepEqual([back.llm.provider, back.voice], ['builtin', 'builtin-ava']);
    const again = (await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, ...as(user), payload: { llm: { provider: 'openai-realtime', model: 'gpt-realtime-mini' } } })).json();
    assert.deepEqual([again.llm.model, again.voice], ['gpt-realtime-mini', 'alloy']);
    // Text chat has no speech model: without LLM_BASE_URL the built-in engine answers it.
    const chat = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/chat`, ...as(user), payload: { message: 'Hello there' } });
    assert.equal(chat.statusCode, 200, chat.body);
    assert.ok(chat.json().reply.length > 0);
    assert.equal(fake.connections.length, 0, 'no Realtime session for a text chat');
  });

  it('a sandbox call: greeting, the caller heard and answered, end_call, with transcript, latency, recording, extraction and cost', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { voice: 'cedar', llm: { provider: 'openai-realtime' }, extraction_fields: [{ name: 'topic', type: 'string', description: 'what the caller asked about' }] });
    fake.reset();
    fake.reply(sayExactly, { text: 'We open at nine.' }, { functionCall: { name: 'end_call', arguments: { reason: 'caller_goodbye' } } }, { text: 'Goodbye!' });
    fake.hear('What time do you open?', 'Thanks, goodbye.');
    const queued = await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['What time do you open?', 'Thanks, goodbye.'] } });
    const call = await waitForEnd(t, user, queued.id);
    assert.deepEqual([call.status, call.end_reason], ['completed', 'caller_goodbye'], JSON.stringify(call.transcript));
    assert.deepEqual(
      call.transcript.map((e: { role: string; text: string }) => `${e.role}: ${e.text}`),
      ['agent: Hello, this is Ada from the bistro. How can I help?', 'user: What time do you open?', 'agent: We open at nine.', 'user: Thanks, goodbye.', 'agent: Goodbye!'],
    );
    assert.equal(call.latency.turns, 2);
    assert.ok(call.transcript[2].latency_ms >= 0);
    // The model was configured from the agent: its voice, tools (transfer, end call), the prompt.
    const session = fake.connections.at(-1)?.session();
    assert.equal(session?.audio.output.voice, 'cedar');
    assert.deepEqual(session?.tools.map((tool: { name: string }) => tool.name), ['transfer_call', 'end_call']);
    assert.ok(String(session?.instructions).startsWith('You are Ada, the receptionist of a bistro.'));
    assert.ok(Object.hasOwn(call.extracted, 'topic'));
    assert.equal(call.duration_seconds, Math.ceil(call.duration_ms / 1000));
    assert.equal(call.cost_usd, Math.round((call.duration_seconds * 0.09 * 1e6) / 60) / 1e6);
    const recording = await t.request({ method: 'GET', url: `/v1/calls/${call.id}/recording.mp3`, ...as(user) });
    assert.equal(recording.statusCode, 200);
    const seconds = (await decodedMs(recording.rawPayload)) / 1000;
    assert.ok(Math.abs(seconds - call.duration_ms / 1000) <= (call.duration_ms / 1000) * 0.1 + 0.1, `recording ${seconds} s, call ${call.duration_ms} ms`);
  });

  it('a model that does not answer in time: the call fails with llm_failed', async (test) => {
    fake.reset();
    fake.set({ sessionCreatedDelayMs: 60_000 });
    const app = await buildTestApp({ env: { REALTIME_BASE_URL: fake.url, REALTIME_API_KEY: 'sk-realtime', REALTIME_CONNECT_TIMEOUT_MS: '200' }, t: test });
    try {
      const other = await signUp(app);
      const slow = await createCallAgent(app, other, { llm: { provider: 'openai-realtime' } });
      const queued = await placeCall(app, other, { agent_id: slow.id, to: '+15550100200' });
      const call = await waitForEnd(app, other, queued.id);
      assert.deepEqual([call.status, call.error?.code], ['failed', 'llm_failed']);
    } finally {
      fake.set({ sessionCreatedDelayMs: 0 });
    }
  });
});
