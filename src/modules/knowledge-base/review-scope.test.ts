// Review checks of issue 5: query top_k bounds and default, the DESIGN shapes of a base and its
// sources, and workspace isolation of knowledge bases referenced by agents and of every KB route.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { addText, createBase, query } from './test-helpers.ts';

describe('knowledge base review checks', async () => {
  const t = await buildTestApp();

  it('query returns 5 results by default, up to top_k (1..20) otherwise', async () => {
    const user = await signUp(t);
    const kb = await createBase(t, user);
    for (let i = 1; i <= 8; i++) await addText(t, user, kb.id, `Note ${i}`, `Zebra crossing number ${i} is near gate ${i}.`);
    assert.equal((await query(t, user, kb.id, 'zebra')).length, 5);
    assert.equal((await query(t, user, kb.id, 'zebra', 1)).length, 1);
    assert.equal((await query(t, user, kb.id, 'zebra', 20)).length, 8);
    for (const top_k of [0, 21, 2.5]) {
      const bad = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/query`, token: user.accessToken, payload: { query: 'zebra', top_k } });
      assert.equal(bad.statusCode, 422, `top_k ${top_k}: ${bad.body}`);
    }
  });

  it('answers the DESIGN shapes for a base and its sources', async () => {
    const user = await signUp(t);
    const kb = await createBase(t, user, { name: 'Shapes', description: 'd' });
    const source = await addText(t, user, kb.id, 'Doc', 'Some words to index.');
    const base = (await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}`, token: user.accessToken })).json();
    for (const key of ['id', 'name', 'description', 'source_count', 'chunk_count', 'status']) assert.ok(key in base, key);
    assert.deepEqual([base.source_count, base.chunk_count, base.status], [1, 1, 'ready']);
    const got = (await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}/sources/${source.id}`, token: user.accessToken })).json();
    for (const key of ['id', 'type', 'title', 'status', 'chunk_count', 'bytes']) assert.ok(key in got, key);
    assert.deepEqual([got.type, got.status, got.chunk_count, got.bytes], ['text', 'ready', 1, 20]);
    assert.equal('url' in got || 'filename' in got || 'error' in got, false);
  });

  it("refuses another workspace's knowledge base in an agent, on create and on update", async () => {
    const owner = await signUp(t);
    const stranger = await signUp(t);
    const theirs = await createBase(t, stranger);
    const created = await t.request({ method: 'POST', url: '/v1/agents', token: owner.accessToken, payload: { name: 'A', knowledge_base_ids: [theirs.id] } });
    assert.equal(created.statusCode, 422, created.body);
    const agent = (await t.request({ method: 'POST', url: '/v1/agents', token: owner.accessToken, payload: { name: 'A' } })).json();
    const patched = await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, token: owner.accessToken, payload: { knowledge_base_ids: [theirs.id] } });
    assert.equal(patched.statusCode, 422, patched.body);
    assert.deepEqual(patched.json().errors.map((e: { path: string }) => e.path), ['knowledge_base_ids.0']);
  });

  it('deleting a base detaches it from the agents that use it, so their PATCH still validates', async () => {
    const user = await signUp(t);
    const kept = await createBase(t, user, { name: 'Kept' });
    const doomed = await createBase(t, user, { name: 'Doomed' });
    const agent = (await t.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: { name: 'A', knowledge_base_ids: [doomed.id, kept.id] } })).json();
    const other = (await t.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: { name: 'B', knowledge_base_ids: [kept.id] } })).json();
    const deleted = await t.request({ method: 'DELETE', url: `/v1/knowledge-base/${doomed.id}`, token: user.accessToken });
    assert.equal(deleted.statusCode, 204, deleted.body);
    const read = (await t.request({ method: 'GET', url: `/v1/agents/${agent.id}`, token: user.accessToken })).json();
    assert.deepEqual(read.knowledge_base_ids, [kept.id]);
    assert.deepEqual((await t.request({ method: 'GET', url: `/v1/agents/${other.id}`, token: user.accessToken })).json().knowledge_base_ids, [kept.id]);
    // A client sending the agent back as it read it is not refused.
    const patched = await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, token: user.accessToken, payload: { knowledge_base_ids: read.knowledge_base_ids } });
    assert.equal(patched.statusCode, 200, patched.body);
  });

  it("never reaches another workspace's base, source or chunks through any route", async () => {
    const owner = await signUp(t);
    const stranger = await signUp(t);
    const kb = await createBase(t, owner);
    const source = await addText(t, owner, kb.id, 'Secret', 'The vault code is kept by the night manager.');
    // The stranger's own base, used as the path of the owner's source.
    const own = await createBase(t, stranger);
    const urls: Array<[string, string, unknown?]> = [
      ['GET', `/v1/knowledge-base/${kb.id}`],
      ['PATCH', `/v1/knowledge-base/${kb.id}`, { name: 'x' }],
      ['GET', `/v1/knowledge-base/${kb.id}/sources`],
      ['POST', `/v1/knowledge-base/${kb.id}/sources`, { type: 'text', title: 't', text: 'x' }],
      ['GET', `/v1/knowledge-base/${kb.id}/sources/${source.id}`],
      ['GET', `/v1/knowledge-base/${own.id}/sources/${source.id}`],
      ['GET', `/v1/knowledge-base/${own.id}/sources/${source.id}/chunks`],
      ['POST', `/v1/knowledge-base/${own.id}/sources/${source.id}/refresh`],
      ['DELETE', `/v1/knowledge-base/${own.id}/sources/${source.id}`],
      ['POST', `/v1/knowledge-base/${kb.id}/query`, { query: 'vault code' }],
      ['DELETE', `/v1/knowledge-base/${kb.id}`],
    ];
    for (const [method, url, payload] of urls) {
      const res = await t.request({ method: method as 'GET', url, token: stranger.accessToken, ...(payload ? { payload: payload as object } : {}) });
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
      assert.doesNotMatch(res.body, /vault/);
    }
    assert.equal((await query(t, owner, kb.id, 'vault code')).length, 1);
  });
});
