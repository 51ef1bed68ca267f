import assert from 'node:assert/strict';
import type { TestApp } from '../../../test/support/app.ts';
import type { TestUser } from '../../../test/support/fixtures.ts';
import { as } from '../calls/test-helpers.ts';

// Shared steps of the Twilio tests: a number of the fake Twilio's, bought and given to an agent.

export async function buyNumber(t: TestApp, user: TestUser, agentId: string): Promise<{ id: string; number: string }> {
  const available = await t.request({ method: 'GET', url: '/v1/phone-numbers/available?country=US&area_code=415', ...as(user) });
  assert.equal(available.statusCode, 200, available.body);
  const number = available.json().data[0].number as string;
  const bought = await t.request({ method: 'POST', url: '/v1/phone-numbers/buy', ...as(user), payload: { number } });
  assert.equal(bought.statusCode, 201, bought.body);
  const assigned = await t.request({ method: 'POST', url: `/v1/phone-numbers/${bought.json().id}/assign`, ...as(user), payload: { agent_id: agentId } });
  assert.equal(assigned.statusCode, 200, assigned.body);
  return { id: bought.json().id, number };
}
