import assert from 'node:assert/strict';
import type { TestApp } from '../../../test/support/app.ts';
import type { TestUser } from '../../../test/support/fixtures.ts';

// Shared steps of the calls tests: an agent, a placed sandbox call, its end.

export const as = (user: TestUser) => ({ token: user.accessToken, workspaceId: user.workspaceId });

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

/** Runs the dialer until the call has ended; answers the call. */
export async function waitForEnd(t: TestApp, user: TestUser, callId: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await t.calls.worker.runDueOnce();
    const res = await t.request({ method: 'GET', url: `/v1/calls/${callId}`, ...as(user) });
    assert.equal(res.statusCode, 200, res.body);
    const call = res.json();
    if (TERMINAL.has(call.status)) return call;
    if (Date.now() > deadline) assert.fail(`call ${callId} still ${call.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
