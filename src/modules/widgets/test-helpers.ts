import assert from 'node:assert/strict';
import type { TestApp } from '../../../test/support/app.ts';
import type { TestUser } from '../../../test/support/fixtures.ts';
import { as } from '../calls/test-helpers.ts';

// Shared steps of the widgets tests: an agent answering from a knowledge base, and its widget.

export const KB_TEXT =
  'Opening hours. The Blue Fern bistro opens at nine in the morning and closes at ten in the evening, every day except Monday.\n\n' +
  'Parking. Guests park for free in the garage on Elm Street; show the ticket at the counter.';

export async function createKbAgent(t: TestApp, user: TestUser, fields: Record<string, unknown> = {}) {
  const kb = await t.request({ method: 'POST', url: '/v1/knowledge-base', ...as(user), payload: { name: 'Bistro facts' } });
  assert.equal(kb.statusCode, 201, kb.body);
  const source = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.json().id}/sources`, ...as(user), payload: { type: 'text', title: 'Facts', text: KB_TEXT } });
  assert.equal(source.statusCode, 201, source.body);
  const agent = await t.request({
    method: 'POST',
    url: '/v1/agents',
    ...as(user),
    payload: { name: 'Fern', prompt: 'SECRET-PROMPT: you are the host of the Blue Fern bistro.', first_message: 'Hi, Fern here at {{company}}. Ask me anything!', knowledge_base_ids: [kb.json().id], ...fields },
  });
  assert.equal(agent.statusCode, 201, agent.body);
  return agent.json() as { id: string; name: string };
}

export async function createWidget(t: TestApp, user: TestUser, body: Record<string, unknown>) {
  const res = await t.request({ method: 'POST', url: '/v1/widgets', ...as(user), payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; embed_url: string; embed_code: string; allowed_origins: string[] };
}
