import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startFakeLiveKit } from '../../../test/fakes/livekit.ts';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';
import { createWidget } from './test-helpers.ts';

// With LiveKit configured, API voice sessions are LiveKit rooms, but a widget's session stays on
// the built-in media WebSocket: embed.js has no dependency and speaks only that protocol.

const API_KEY = 'APIlivekitTest';
const API_SECRET = 'livekit-test-secret-0123456789abcdef';
const livekit = await startFakeLiveKit({ apiKey: API_KEY, apiSecret: API_SECRET });
after(() => livekit.close());
const t = await buildTestApp({ env: { LIVEKIT_URL: livekit.url, LIVEKIT_API_KEY: API_KEY, LIVEKIT_API_SECRET: API_SECRET, LIVEKIT_AGENT_JOIN: 'false' } });

describe('widget voice when LiveKit is configured', () => {
  it('uses the built-in media WebSocket and creates no LiveKit room', async () => {
    const user = await signUp(t);
    const widget = await createWidget(t, user, { agent_id: (await createCallAgent(t, user)).id, mode: 'voice' });
    const res = await t.request({ method: 'POST', url: `/v1/widgets/${widget.id}/voice`, payload: { visitor_id: 'v-9' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual([res.json().transport, res.json().url], ['builtin', 'ws://localhost:3000/v1/media/stream']);
    assert.match(res.json().token, /^mt_/);
    assert.ok(!livekit.rooms().some((room) => room.name === res.json().room_name));
    const api = await t.request({ method: 'POST', url: '/v1/voice/sessions', ...as(user), payload: { agent_id: res.json().agent_id, external_user_id: 'u' } });
    assert.equal(api.json().transport, 'livekit', 'API sessions still use LiveKit');
  });
});
