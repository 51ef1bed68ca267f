import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startFakeSttServer } from '../../../test/fakes/openai/stt.ts';
import { buildTestApp } from '../../../test/support/app.ts';
import { spoken } from '../../../test/support/speech.ts';
import { connectMedia, sendPaced, transcriptLines } from '../../../test/support/media-client.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';
import { startReceiver } from '../webhooks/test-receiver.ts';

// Voice sessions over the built-in media WebSocket, in real time, with a Node client: the greeting
// as PCM16 audio and transcripts, a typed turn, real speech heard through the STT adapter and a
// barge-in answered with `clear`, the end through the API with `{type:"end"}`, billing at the
// web-voice rate, and voice_session.ended delivered to the tenant webhook.

const stt = await startFakeSttServer();
const receiver = await startReceiver();
after(async () => {
  await stt.close();
  await receiver.close();
});
const t = await buildTestApp({ env: { STT_BASE_URL: stt.baseUrl } });
await t.app.listen({ port: 0, host: '127.0.0.1' });
const address = t.app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;


const connect = (token: string) => connectMedia(port, token);
const say = sendPaced;
const transcripts = transcriptLines;

async function session(user: TestUser, agentId: string) {
  const res = await t.request({ method: 'POST', url: '/v1/voice/sessions', ...as(user), payload: { agent_id: agentId, external_user_id: 'user-42', metadata: { plan: 'pro' } } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

describe('voice sessions over the media WebSocket', () => {
  it('greets, takes typed and spoken turns, clears on barge-in, ends through the API, bills and notifies', async () => {
    const user = await signUp(t);
    const put = await t.request({ method: 'PUT', url: '/v1/webhooks', ...as(user), payload: { webhook_url: receiver.url } });
    assert.equal(put.statusCode, 200, put.body);
    const agent = await createCallAgent(t, user, { silence_timeout_seconds: 30 });
    const created = await session(user, agent.id);
    assert.deepEqual([created.status, created.transport, created.url, created.external_user_id, created.duration_sec, created.cost_usd], ['active', 'builtin', 'ws://localhost:3000/v1/media/stream', 'user-42', 0, 0]);
    assert.ok(created.token.length > 30 && created.room_name === created.id && created.call_id.startsWith('call_'));
    const stored = await t.platform.db.selectFrom('voice_sessions').select('token_hash').where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.notEqual(stored.token_hash, created.token, 'only a hash of the token is kept');
    assert.equal((await t.request({ method: 'GET', url: `/v1/voice/sessions/${created.id}`, ...as(user) })).json().token, undefined);

    const client = connect(created.token);
    await client.opened;
    // The server speaks first: the greeting's transcript line and its audio.
    await client.until(() => transcripts(client.messages, 'agent').length === 1 && client.audio() > 32_000, 'the greeting');
    assert.deepEqual(transcripts(client.messages, 'agent'), ['Hello, this is Ada from the bistro. How can I help?']);

    client.socket.send(JSON.stringify({ type: 'text', text: 'What time do you open?' }));
    await client.until(() => transcripts(client.messages, 'agent').length === 2, 'the answer to a typed turn');
    assert.deepEqual(transcripts(client.messages, 'user'), ['What time do you open?']);

    // Real speech over the agent's answer: heard by the VAD, transcribed, and the agent stops (clear).
    client.socket.send(JSON.stringify({ type: 'text', text: 'Tell me about your menu please.' }));
    await client.until(() => transcripts(client.messages, 'user').length === 2, 'the second typed turn');
    const before = client.audio();
    await client.until(() => client.audio() > before + 16_000, 'the agent speaking');
    stt.say('Sorry, do you have vegetarian dishes?');
    await say(client.socket, await spoken('Sorry, do you have vegetarian dishes?'));
    await client.until(() => client.messages.some((m) => m.type === 'clear'), 'clear on barge-in');
    await client.until(() => transcripts(client.messages, 'user').includes('Sorry, do you have vegetarian dishes?'), 'the spoken turn');

    const ended = await t.request({ method: 'POST', url: `/v1/voice/sessions/${created.id}/end`, ...as(user) });
    assert.equal(ended.statusCode, 200, ended.body);
    assert.deepEqual([ended.json().status, ended.json().end_reason], ['ended', 'api_end']);
    await client.until(() => client.messages.some((m) => m.type === 'end'), 'the end message');
    assert.deepEqual(client.messages.find((m) => m.type === 'end'), { type: 'end', reason: 'api_end' });
    assert.equal(await client.closed, 1000);

    const final = (await t.request({ method: 'GET', url: `/v1/voice/sessions/${created.id}`, ...as(user) })).json();
    assert.ok(final.duration_sec > 3, `${final.duration_sec} s`);
    assert.equal(final.cost_usd, Math.round((Math.ceil(final.duration_sec) * 0.05 * 1e6) / 60) / 1e6, 'billed per started second at the web-voice rate');
    const ledger = await t.platform.db.selectFrom('wallet_transactions').selectAll().where('reference_id', '=', created.call_id).execute();
    assert.deepEqual(ledger.map((r) => [r.type, Number(r.amount_micros)]), [['voice_session', -Math.round(final.cost_usd * 1e6)]]);
    const transcript = (await t.request({ method: 'GET', url: `/v1/voice/sessions/${created.id}/transcript`, ...as(user) })).json();
    assert.ok(transcript.transcript.some((e: { interrupted?: boolean }) => e.interrupted === true), 'the interrupted agent turn is marked');
    const call = (await t.request({ method: 'GET', url: `/v1/calls/${created.call_id}`, ...as(user) })).json();
    assert.deepEqual([call.direction, call.status, call.end_reason], ['web', 'completed', 'api_hangup']);
    assert.ok(call.latency.turns >= 2);

    const worker = t.modules.webhooks.worker;
    while ((await worker.runDueOnce()) > 0);
    const delivered = receiver.received.map((r) => JSON.parse(r.body)).find((b) => b.event === 'voice_session.ended' || b.type === 'voice_session.ended');
    assert.ok(delivered, 'voice_session.ended reached the tenant webhook');
    const data = delivered.data;
    assert.deepEqual(
      [data.room_name, data.agent_id, data.external_user_id, data.duration_sec, data.cost_usd, data.ended_at],
      [created.room_name, agent.id, 'user-42', final.duration_sec, final.cost_usd, final.ended_at],
    );

    // The token worked once: after the end it opens nothing.
    const again = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/media/stream?token=${encodeURIComponent(created.token)}`);
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('open', () => resolve(101));
      socket.on('error', () => undefined);
    });
    assert.equal(again, 401);
    assert.equal((await t.request({ method: 'POST', url: `/v1/voice/sessions/${created.id}/end`, ...as(user) })).statusCode, 409);
  });

  it('refuses a missing, wrong or expired token at the upgrade; a session nobody joined costs nothing', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const upgrade = (query: string) =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/media/stream${query}`);
        socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        socket.on('open', () => resolve(101));
        socket.on('error', () => undefined);
      });
    assert.equal(await upgrade(''), 401);
    assert.equal(await upgrade('?token=mt_wrong'), 401);
    const expiring = await session(user, agent.id);
    await t.platform.db.updateTable('voice_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', expiring.id).execute();
    assert.equal(await upgrade(`?token=${expiring.token}`), 401);
    assert.equal(await t.modules.voice.worker.runDueOnce(), 1);
    const idle = (await t.request({ method: 'GET', url: `/v1/voice/sessions/${expiring.id}`, ...as(user) })).json();
    assert.deepEqual([idle.status, idle.end_reason, idle.cost_usd], ['ended', 'idle_timeout', 0]);

    const unjoined = await session(user, agent.id);
    const ended = (await t.request({ method: 'POST', url: `/v1/voice/sessions/${unjoined.id}/end`, ...as(user) })).json();
    assert.deepEqual([ended.status, ended.end_reason, ended.duration_sec, ended.cost_usd], ['ended', 'api_end', 0, 0]);
    const ledger = await t.platform.db.selectFrom('wallet_transactions').selectAll().where('reference_id', '=', unjoined.call_id).execute();
    assert.equal(ledger.length, 0);

    const listed = (await t.request({ method: 'GET', url: '/v1/voice/sessions?status=ended&external_user_id=user-42', ...as(user) })).json();
    assert.deepEqual(listed.data.map((s: { id: string }) => s.id).sort(), [expiring.id, unjoined.id].sort());
    assert.equal((await t.request({ method: 'POST', url: '/v1/voice/sessions', ...as(user), payload: { agent_id: 'agent_missing', external_user_id: 'x' } })).statusCode, 422);
  });

  it('POST /v1/media/token answers a session too; /v1/media/health says the built-in transport and the engines', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const token = await t.request({ method: 'POST', url: '/v1/media/token', ...as(user), payload: { agent_id: agent.id } });
    assert.equal(token.statusCode, 201, token.body);
    assert.ok(token.json().token && token.json().external_user_id.startsWith('anonymous-'));
    const health = (await t.request({ method: 'GET', url: '/v1/media/health', ...as(user) })).json();
    assert.deepEqual([health.provider, health.configured, health.reachable], ['builtin', true, true]);
    assert.equal(health.engines.stt.provider, 'openai-compatible');
    assert.equal(health.engines.stt.reachable, true);
    assert.equal(health.engines.telephony.provider, 'sandbox');
  });
});

securitySuite('voice', async () => t, {
  'POST /v1/voice/sessions': {
    scope: 'write',
    prepare: async (app, owner) => ({ method: 'POST', url: '/v1/voice/sessions', payload: { agent_id: (await createCallAgent(app, owner)).id, external_user_id: 'u' } }),
  },
  'POST /v1/media/token': { scope: 'write', prepare: async (app, owner) => ({ method: 'POST', url: '/v1/media/token', payload: { agent_id: (await createCallAgent(app, owner)).id } }) },
  'GET /v1/voice/sessions': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/voice/sessions' }) },
  'GET /v1/media/health': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/media/health' }) },
  'GET /v1/voice/sessions/{id}': {
    scope: 'read-only',
    ownedResource: true,
    prepare: async (app, owner) => ({ method: 'GET', url: `/v1/voice/sessions/${(await createSession(app, owner)).id}` }),
  },
  'POST /v1/voice/sessions/{id}/end': {
    scope: 'write',
    ownedResource: true,
    prepare: async (app, owner) => ({ method: 'POST', url: `/v1/voice/sessions/${(await createSession(app, owner)).id}/end` }),
  },
  'GET /v1/voice/sessions/{id}/transcript': {
    scope: 'read-only',
    ownedResource: true,
    prepare: async (app, owner) => ({ method: 'GET', url: `/v1/voice/sessions/${(await createSession(app, owner)).id}/transcript` }),
  },
});

async function createSession(app: typeof t, owner: TestUser) {
  const agent = await createCallAgent(app, owner);
  const res = await app.request({ method: 'POST', url: '/v1/voice/sessions', ...as(owner), payload: { agent_id: agent.id, external_user_id: 'u' } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string };
}
