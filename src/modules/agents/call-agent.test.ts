import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { loadCallAgent } from './call-agent.ts';

// The agent fields a live call runs on (turn taking, limits, voicemail) through the API, and the
// runnable agent the call runtime loads.

const TURN_TAKING = { turn_end_silence_ms: 800, barge_in_min_ms: 400, interruptible: false, silence_timeout_seconds: 30 };
const DEFAULTS = { turn_end_silence_ms: 500, barge_in_min_ms: 250, interruptible: true, silence_timeout_seconds: 10 };
const pick = (agent: Record<string, unknown>) => Object.fromEntries(Object.keys(DEFAULTS).map((key) => [key, agent[key]]));

async function createAgent(t: TestApp, user: TestUser, body: Record<string, unknown>) {
  const res = await t.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

const errorPaths = (res: { json(): { errors?: Array<{ path: string }> } }) => (res.json().errors ?? []).map((e) => e.path);

describe('agent turn taking and the runnable agent', async () => {
  const t = await buildTestApp();

  it('creates an agent with the turn-taking fields and reads them back', async () => {
    const user = await signUp(t);
    const created = await createAgent(t, user, { name: 'Patient', ...TURN_TAKING });
    assert.deepEqual(pick(created), TURN_TAKING);
    const read = await t.request({ method: 'GET', url: `/v1/agents/${created.id}`, token: user.accessToken });
    assert.deepEqual(pick(read.json()), TURN_TAKING);
    const row = await t.platform.db.selectFrom('agents').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.deepEqual(pick(row), TURN_TAKING);
    const listed = (await t.request({ method: 'GET', url: '/v1/agents', token: user.accessToken })).json().data[0];
    assert.deepEqual(pick(listed), TURN_TAKING);
  });

  it('applies the defaults when they are left out', async () => {
    const user = await signUp(t);
    const created = await createAgent(t, user, { name: 'Default' });
    assert.deepEqual(pick(created), DEFAULTS);
    assert.deepEqual(pick((await t.request({ method: 'GET', url: `/v1/agents/${created.id}`, token: user.accessToken })).json()), DEFAULTS);
  });

  it('PATCH changes one field and keeps the others (limits and voicemail too); duplicate copies them', async () => {
    const user = await signUp(t);
    const agent = await createAgent(t, user, { name: 'Patched', ...TURN_TAKING });
    const res = await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, token: user.accessToken, payload: { interruptible: true } });
    assert.equal(res.statusCode, 200, res.body);
    const expected = { ...TURN_TAKING, interruptible: true };
    assert.deepEqual(pick(res.json()), expected);
    const again = await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, token: user.accessToken, payload: { silence_timeout_seconds: 600, turn_end_silence_ms: 100 } });
    assert.deepEqual(pick(again.json()), { ...expected, silence_timeout_seconds: 600, turn_end_silence_ms: 100 });
    assert.deepEqual(pick((await t.request({ method: 'GET', url: `/v1/agents/${agent.id}`, token: user.accessToken })).json()), pick(again.json()));

    const limits = await t.request({
      method: 'PATCH',
      url: `/v1/agents/${agent.id}`,
      token: user.accessToken,
      payload: { max_duration_seconds: 900, voicemail: { action: 'leave_message', message: 'Call back.' } },
    });
    assert.equal(limits.statusCode, 200, limits.body);
    assert.deepEqual([limits.json().max_duration_seconds, limits.json().voicemail], [900, { action: 'leave_message', message: 'Call back.' }]);
    assert.deepEqual(pick(limits.json()), pick(again.json()));

    const copy = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/duplicate`, token: user.accessToken, payload: {} });
    assert.equal(copy.statusCode, 201, copy.body);
    assert.deepEqual(pick(copy.json()), pick(again.json()));
    assert.deepEqual([copy.json().max_duration_seconds, copy.json().voicemail], [900, { action: 'leave_message', message: 'Call back.' }]);
  });

  it('accepts the bounds and refuses values outside them with 422 naming the field (create and PATCH)', async () => {
    const user = await signUp(t);
    const edges = { turn_end_silence_ms: 100, barge_in_min_ms: 2000, silence_timeout_seconds: 2 };
    const agent = await createAgent(t, user, { name: 'Edges', ...edges });
    assert.deepEqual(pick(agent), { ...DEFAULTS, ...edges });
    const other = await createAgent(t, user, { name: 'Edges 2', turn_end_silence_ms: 5000, barge_in_min_ms: 50, silence_timeout_seconds: 600 });
    assert.deepEqual(pick(other), { interruptible: true, turn_end_silence_ms: 5000, barge_in_min_ms: 50, silence_timeout_seconds: 600 });

    const bad: Array<[string, unknown]> = [
      ['turn_end_silence_ms', 99],
      ['turn_end_silence_ms', 5001],
      ['turn_end_silence_ms', 500.5],
      ['barge_in_min_ms', 49],
      ['barge_in_min_ms', 2001],
      ['silence_timeout_seconds', 1],
      ['silence_timeout_seconds', 601],
      ['interruptible', 'yes'],
      ['interruptible', null],
      ['max_duration_seconds', 9],
      ['max_duration_seconds', 14_401],
    ];
    for (const [field, value] of bad) {
      const label = `${field}=${JSON.stringify(value)}`;
      const created = await t.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: { name: 'Bad', [field]: value } });
      assert.equal(created.statusCode, 422, `create ${label}: ${created.body}`);
      assert.deepEqual(errorPaths(created), [field], label);
      const patched = await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, token: user.accessToken, payload: { [field]: value } });
      assert.equal(patched.statusCode, 422, `PATCH ${label}: ${patched.body}`);
      assert.deepEqual(errorPaths(patched), [field], label);
    }
    const read = (await t.request({ method: 'GET', url: `/v1/agents/${agent.id}`, token: user.accessToken })).json();
    assert.deepEqual(pick(read), { ...DEFAULTS, ...edges }, 'refused changes leave the agent as it was');
    assert.equal(read.max_duration_seconds, 600);
  });

  it('loadCallAgent: the engine view plus voice, limits, turn taking and the webhook destination', async () => {
    const user = await signUp(t);
    const created = await createAgent(t, user, {
      name: 'Caller',
      prompt: 'Help {{name}}.',
      first_message: 'Hi {{name}}',
      language: 'en-GB',
      voice: 'builtin-cora',
      llm: { temperature: 0.2 },
      transfer_number: '+15550100200',
      functions: [{ name: 'lookup', url: 'https://example.com/lookup' }],
      extraction_fields: [{ name: 'email', type: 'string' }],
      end_call_phrases: ['bye'],
      max_duration_seconds: 120,
      voicemail: { action: 'leave_message', message: 'Call us back.' },
      webhook_url: 'https://example.com/hooks',
      webhook_events: ['call.ended'],
      ...TURN_TAKING,
    });
    const agent = await loadCallAgent(t.platform.db, user.workspaceId, created.id);
    assert.deepEqual(agent, {
      id: created.id,
      name: 'Caller',
      prompt: 'Help {{name}}.',
      first_message: 'Hi {{name}}',
      language: 'en-GB',
      transfer_number: '+15550100200',
      functions: [{ name: 'lookup', description: '', url: 'https://example.com/lookup', method: 'POST', parameters: { type: 'object', properties: {} }, timeout_ms: 5000 }],
      extraction_fields: [{ name: 'email', type: 'string', description: '' }],
      end_call_phrases: ['bye'],
      knowledge_base_ids: [],
      llm: { provider: 'builtin', model: 'builtin', temperature: 0.2 },
      voice: 'builtin-cora',
      max_duration_seconds: 120,
      voicemail: { action: 'leave_message', message: 'Call us back.' },
      ...TURN_TAKING,
      webhook_secret: created.webhook_secret,
      destination: {
        agentId: created.id,
        url: 'https://example.com/hooks',
        secret: created.webhook_secret,
        events: ['call.ended'],
        previousSecret: null,
        previousSecretExpiresAt: null,
      },
    });

    const rotated = await t.request({ method: 'POST', url: `/v1/agents/${created.id}/webhook-secret/rotate`, token: user.accessToken });
    const row = await t.platform.db.selectFrom('agents').select('webhook_secret_rotated_at').where('id', '=', created.id).executeTakeFirstOrThrow();
    const after = await loadCallAgent(t.platform.db, user.workspaceId, created.id);
    assert.equal(after?.webhook_secret, rotated.json().webhook_secret);
    assert.equal(after?.destination?.secret, rotated.json().webhook_secret);
    assert.equal(after?.destination?.previousSecret, created.webhook_secret);
    assert.equal(new Date(after?.destination?.previousSecretExpiresAt ?? 0).getTime(), new Date(row.webhook_secret_rotated_at ?? 0).getTime() + 24 * 3_600_000);
  });

  it('loadCallAgent: no destination without a webhook_url; undefined for another workspace, a deleted or an unknown agent', async () => {
    const user = await signUp(t);
    const other = await signUp(t);
    const plain = await createAgent(t, user, { name: 'Plain' });
    const loaded = await loadCallAgent(t.platform.db, user.workspaceId, plain.id);
    assert.equal(loaded?.destination, null);
    assert.deepEqual(pick(loaded as unknown as Record<string, unknown>), DEFAULTS);
    assert.deepEqual([loaded?.max_duration_seconds, loaded?.voicemail, loaded?.voice], [600, { action: 'hangup', message: null }, 'builtin-ava']);

    assert.equal(await loadCallAgent(t.platform.db, other.workspaceId, plain.id), undefined);
    assert.equal(await loadCallAgent(t.platform.db, user.workspaceId, 'agent_00000000000000000000000000'), undefined);
    const del = await t.request({ method: 'DELETE', url: `/v1/agents/${plain.id}`, token: user.accessToken });
    assert.equal(del.statusCode, 204, del.body);
    assert.equal(await loadCallAgent(t.platform.db, user.workspaceId, plain.id), undefined);
  });
});
