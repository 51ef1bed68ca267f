import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startFakeLiveKit } from '../../../test/fakes/livekit.ts';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { createLiveKitMedia } from '../../providers/media/livekit.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';

// Voice sessions in LiveKit mode (LIVEKIT_* set), against a local fake of LiveKit's RoomService
// reached through the real livekit-server-sdk: the session's room is created, the client's token
// is limited to it with the external user as identity, health reports LiveKit. The agent's join
// (@livekit/rtc-node) needs a LiveKit media server, which does not run here: see docs/decisions.md.

const API_KEY = 'APIlivekitTest';
const API_SECRET = 'livekit-test-secret-0123456789abcdef';
const livekit = await startFakeLiveKit({ apiKey: API_KEY, apiSecret: API_SECRET });
after(() => livekit.close());
// No LiveKit media server runs here, so the platform's agent does not join (LIVEKIT_AGENT_JOIN=false).
const t = await buildTestApp({ env: { LIVEKIT_URL: livekit.url, LIVEKIT_API_KEY: API_KEY, LIVEKIT_API_SECRET: API_SECRET, LIVEKIT_AGENT_JOIN: 'false' } });

describe('voice sessions on LiveKit', () => {
  it('creates the room and a token for that room only; health says livekit and reachable', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const res = await t.request({ method: 'POST', url: '/v1/voice/sessions', ...as(user), payload: { agent_id: agent.id, external_user_id: 'user-7' } });
    assert.equal(res.statusCode, 201, res.body);
    const session = res.json();
    assert.deepEqual([session.transport, session.url, session.room_name], ['livekit', livekit.url, session.id]);
    assert.ok(livekit.rooms().some((room) => room.name === session.room_name), 'the room exists on the server');
    const verifier = createLiveKitMedia({ url: livekit.url, apiKey: API_KEY, apiSecret: API_SECRET });
    assert.deepEqual(await verifier.verifyToken(session.token), { identity: 'user-7', roomName: session.room_name });
    const payload = JSON.parse(Buffer.from(session.token.split('.')[1], 'base64url').toString());
    assert.deepEqual(payload.video, { roomJoin: true, room: session.room_name, canPublish: true, canSubscribe: true });

    const health = (await t.request({ method: 'GET', url: '/v1/media/health', ...as(user) })).json();
    assert.deepEqual([health.provider, health.configured, health.reachable], ['livekit', true, true]);
    assert.equal(typeof health.latency_ms, 'number');
  });
});
