import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';

describe('chat when the language model is unreachable', async () => {
  // Port 9 (discard) on loopback: nothing listens, the connection is refused.
  const t = await buildTestApp({ env: { LLM_BASE_URL: 'http://127.0.0.1:9/v1', LLM_API_KEY: 'sk-test' } });

  it('answers 502 upstream_error, not a 500, and keeps no half conversation', async () => {
    const user = await signUp(t);
    const created = await t.request({
      method: 'POST',
      url: '/v1/agents',
      token: user.accessToken,
      payload: { name: 'Model-backed', llm: { provider: 'openai', model: 'gpt-4o-mini' } },
    });
    assert.equal(created.statusCode, 201, created.body);
    const res = await t.request({ method: 'POST', url: `/v1/agents/${created.json().id}/chat`, token: user.accessToken, payload: { message: 'hello' } });
    assert.equal(res.statusCode, 502, res.body);
    assert.equal(res.json().code, 'upstream_error');
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    const stored = await t.platform.db.selectFrom('agent_conversations').select('id').where('agent_id', '=', created.json().id).execute();
    assert.equal(stored.length, 0);
  });
});
