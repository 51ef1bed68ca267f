import assert from 'node:assert/strict';
import type { TestApp } from '../../../test/support/app.ts';
import type { TestUser } from '../../../test/support/fixtures.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';

// Shared steps of the campaigns tests: a campaign, an upload, the state changes.

export async function createCampaign(t: TestApp, user: TestUser, fields: Record<string, unknown> = {}) {
  const agent = fields.agent_id ? { id: fields.agent_id as string } : await createCallAgent(t, user);
  const res = await t.request({ method: 'POST', url: '/v1/campaigns', ...as(user), payload: { name: 'November reminders', agent_id: agent.id, ...fields } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; status: string; agent_id: string; [key: string]: unknown };
}

export async function uploadCsv(t: TestApp, user: TestUser, campaignId: string, csv: string | Buffer, expected = 200) {
  const res = await t.request({ method: 'POST', url: `/v1/campaigns/${campaignId}/upload`, ...as(user), headers: { 'content-type': 'text/csv' }, payload: csv });
  assert.equal(res.statusCode, expected, res.body);
  return res.json();
}

export async function action(t: TestApp, user: TestUser, campaignId: string, verb: 'start' | 'pause' | 'cancel', expected = 200) {
  const res = await t.request({ method: 'POST', url: `/v1/campaigns/${campaignId}/${verb}`, ...as(user) });
  assert.equal(res.statusCode, expected, res.body);
  return res.json();
}

/** A CSV of `n` distinct sandbox numbers (+1555 02x xxxx) with a `name` variable. */
export function numbersCsv(n: number, extra: string[] = []): string {
  const lines = ['phone,name'];
  for (let i = 0; i < n; i++) lines.push(`+1555${String(200_0000 + i).padStart(7, '0')},Contact ${i}`);
  for (const number of extra) lines.push(`${number},Special`);
  return `${lines.join('\n')}\n`;
}
