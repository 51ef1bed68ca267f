import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import type { TestApp } from '../../../test/support/app.ts';
import type { TestUser } from '../../../test/support/fixtures.ts';
import { newId } from '../../platform/ids.ts';

// Shared steps of the calls tests: an agent, a placed sandbox call, its end.

export const as = (user: TestUser) => ({ token: user.accessToken, workspaceId: user.workspaceId });

/** A sandbox number of the user's workspace assigned to `agentId` (as bought and assigned), for inbound calls. */
export async function assignSandboxNumber(t: TestApp, user: TestUser, agentId: string, number: string) {
  const now = new Date();
  await t.platform.db
    .insertInto('phone_numbers')
    .values({ id: newId('pn'), workspace_id: user.workspaceId, number, country: 'US', provider: 'sandbox', provider_number_id: null, capabilities: JSON.stringify({ voice: true, sms: false }), agent_id: agentId, label: null, monthly_cost_micros: 0, created_at: now, updated_at: now })
    .execute();
}

export async function createCallAgent(t: TestApp, user: TestUser, fields: Record<string, unknown> = {}) {
  const res = await t.request({
    method: 'POST',
    url: '/v1/agents',
    ...as(user),
    payload: {
      name: 'Ada',
      prompt: 'You are Ada, the receptionist of a bistro.',
      first_message: 'Hello, this is Ada from the bistro. How can I help?',
      transfer_number: '+15550100999',
      ...fields,
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; webhook_secret: string };
}

export async function placeCall(t: TestApp, user: TestUser, body: Record<string, unknown>) {
  const res = await t.request({ method: 'POST', url: '/v1/calls/outbound', ...as(user), payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; status: string };
}

const TERMINAL = new Set(['completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled']);

/** Runs the dialer until the call's status is terminal (its post-call work may still be pending); answers the call. */
export async function waitForTerminal(t: TestApp, user: TestUser, callId: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await t.modules.calls.worker.runDueOnce();
    const res = await t.request({ method: 'GET', url: `/v1/calls/${callId}`, ...as(user) });
    assert.equal(res.statusCode, 200, res.body);
    const call = res.json();
    if (TERMINAL.has(call.status)) return call;
    if (Date.now() > deadline) assert.fail(`call ${callId} still ${call.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Runs the post-call job until the ended call's recording and analysis have settled and its
 * call.ended was emitted (DESIGN part 9); answers the call.
 */
export async function waitForPostCall(t: TestApp, user: TestUser, callId: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await t.modules.calls.postCall.runDueOnce();
    const row = await t.platform.db.selectFrom('calls').select(['ended_event_at', 'status']).where('id', '=', callId).executeTakeFirstOrThrow();
    if (row.ended_event_at !== null) {
      const res = await t.request({ method: 'GET', url: `/v1/calls/${callId}`, ...as(user) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }
    if (Date.now() > deadline) assert.fail(`call ${callId} (${row.status}): post-call work not done after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The call's MP3 once it is stored: runs the post-call job until then (409 recording_not_ready while it is being made). */
export async function waitForRecording(t: TestApp, user: TestUser, callId: string, timeoutMs = 120_000): Promise<Buffer> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await t.modules.calls.postCall.runDueOnce();
    const res = await t.request({ method: 'GET', url: `/v1/calls/${callId}/recording.mp3`, ...as(user) });
    if (res.statusCode !== 409) {
      assert.equal(res.statusCode, 200, res.body);
      return res.rawPayload;
    }
    if (Date.now() > deadline) assert.fail(`the recording of ${callId} is still not ready after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs the dialer until the call has ended and its post-call work (recording, analysis, call.ended) is done; answers the call. */
export async function waitForEnd(t: TestApp, user: TestUser, callId: string, timeoutMs = 60_000) {
  await waitForTerminal(t, user, callId, timeoutMs);
  return waitForPostCall(t, user, callId, timeoutMs);
}

/** The columns every call row written straight into the table shares: an outbound call of `agentId` from `at`. */
export function outboundCallRow(user: TestUser, agentId: string, id: string, at: Date) {
  return {
    id,
    workspace_id: user.workspaceId,
    agent_id: agentId,
    direction: 'outbound',
    from_number: '+15550100001',
    to_number: '+15550100200',
    started_at: at,
    answered_at: at,
    transcript: JSON.stringify([]),
    extracted: JSON.stringify({}),
    variables: JSON.stringify({}),
    metadata: JSON.stringify({}),
    created_at: at,
    updated_at: at,
  } as const;
}

/** A finished call written straight into the tables (with a stored recording), for tests that only read. */
export async function insertEndedCall(t: TestApp, user: TestUser): Promise<string> {
  const agent = await createCallAgent(t, user);
  const id = `call_${randomUUID().replaceAll('-', '').slice(0, 26)}`;
  const key = `recordings/${user.workspaceId}/${id}.mp3`;
  await t.platform.providers.blobs.put(key, Buffer.from('ID3 not really an mp3'), 'audio/mpeg');
  const now = new Date();
  await t.platform.db
    .insertInto('calls')
    .values({
      ...outboundCallRow(user, agent.id, id, now),
      status: 'completed',
      end_reason: 'caller_goodbye',
      provider: 'sandbox',
      ended_at: now,
      duration_ms: 1000,
      billed_seconds: 1,
      cost_micros: 1500,
      transcript: JSON.stringify([{ role: 'agent', text: 'Hello.', start_ms: 0, end_ms: 900 }]),
      recording_key: key,
      recording_bytes: 21,
      recording_status: 'ready',
      analysis_status: 'ready',
    })
    .execute();
  await t.platform.db.insertInto('call_status_events').values({ call_id: id, seq: 1, status: 'completed', at: now }).execute();
  return id;
}
